"""Verifiers for the evaluation (tests/core/agent/spoiler_eval.py) that are not the oracle:
honest estimates of what a real verification call does with the doubtful sentences.

* ``rule_judge``: sees only what the real prompt gives (``spoiler_verify.verification_prompt``:
  the passages within the bound that best match the sentence, the question, the sentence) and
  decides as a literal-minded reader would, by one rule fixed before it was measured: the
  sentence is SUPPORTED when every name in it is in the passages or the question, at least
  two thirds of its content words are, and, when it tells what happens later or at the end
  ("in the end", "later", "eventually"), all of them are.
* ``model_judge``: the real ``SupportVerifier`` through a provider (a local model server);
  a reply that is no verdict keeps the lexical decision, as in the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.agent.providers.base import ChatProvider
from core.agent.spoiler_text import _WORD, visible_text
from core.agent.spoiler_verify import SupportVerifier, verification_prompt
from core.agent.spoilers import _FUTURE, Segment, SpoilerGuard
from tests.core.agent.spoiler_eval import Verify

COVERAGE = 2 / 3


def rule_verdict(guard: SpoilerGuard, sentence: str, question: str) -> bool:
    """SUPPORTED (True) or UNSUPPORTED by the rule, from the prompt's passages and question."""
    shown_text = "\n".join([*guard.support_passages(sentence), question])
    shown = set(
        guard.index.stems(w.lower() for w in _WORD.findall(visible_text(shown_text))).values()
    )
    content = guard._content(sentence)
    if not content:
        return True
    visible = visible_text(sentence)
    words = _WORD.findall(visible)
    stems = guard.index.stems(w.lower() for w in words)
    names = {stems[w.lower()] for i, w in enumerate(words) if i and w[:1].isupper()}
    if any(n in content and n not in shown for n in names):
        return False
    covered = sum(1 for s in content if s in shown) / len(content)
    if _FUTURE.search(visible) is not None:
        return covered >= 1.0
    return covered >= COVERAGE


def rule_judge(question: str = "") -> Verify:
    def verify(guard: SpoilerGuard, segment: Segment, leak: bool) -> tuple[bool | None, int]:
        system, prompt = verification_prompt(guard, segment.text, question)
        return rule_verdict(guard, segment.text, question), len(system) + len(prompt)

    return verify


def model_judge(
    provider: ChatProvider, log: list[tuple[str, bool, bool | None, str]] | None = None
) -> Callable[[str], Verify]:
    """``evaluate_kinds``'s ``verify`` through a real model; ``log`` gets (sentence, leak,
    verdict, reply) for each call."""

    def make(question: str) -> Verify:
        def verify(guard: SpoilerGuard, segment: Segment, leak: bool) -> tuple[bool | None, int]:
            verifier = SupportVerifier(provider, guard, question)
            check = asyncio.run(verifier(segment.text, within=120.0))
            reply = check.result.message.text if check.result is not None else check.error
            if log is not None:
                log.append((segment.text, leak, check.supported, reply))
            system, prompt = verification_prompt(guard, segment.text, question)
            return check.supported, len(system) + len(prompt)

        return verify

    return make
