"""The semantic layer's optional model check (issue 23): a short verification call for the
sentences the lexical support test finds doubtful.

The lexical test (``SpoilerGuard.supported``) decides alone when no model is connected or the
setting ``spoiler_verify`` is off. With a model, a doubtful sentence (a later passage matches
it somewhat better than the pages read, not clearly enough to hold it back) is sent with the
passages within the bound that best match it; the model answers SUPPORTED or UNSUPPORTED.
The call's tokens count in the answer's usage (the cost meter) and it is written to the event
log like any model call. Any failure, a reply that is no verdict, or no verdict within
``TIMEOUT`` seconds keeps the lexical decision: a verification never loses or stalls an
answer.

A sentence held back only on weak evidence (a motif, a phrase or a pair of ordinary words that
the book uses first after the bound) is verified too: SUPPORTED shows it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from core.agent.providers.base import ChatProvider, StreamText
from core.agent.spoilers import SpoilerGuard
from core.agent.types import Question, TurnRequest, TurnResult, UserMessage
from core.prompts import load_prompt

log = logging.getLogger(__name__)

TIMEOUT = 15.0  # seconds for one verification
MAX_TOKENS = 8
PASSAGE_CHARS = 1500  # of each passage sent


@dataclass(frozen=True)
class SupportCheck:
    supported: bool | None  # None: no verdict (a failure, a timeout): the lexical decision stands
    request: TurnRequest | None = None
    result: TurnResult | None = None
    ms: float = 0.0


def verification_prompt(guard: SpoilerGuard, sentence: str, question: str) -> tuple[str, str]:
    """The system prompt and the message of one verification: the sentence, the question and
    the passages within the bound that best match the sentence (the check's own search, so it
    has support to show whatever the strategy sent the model)."""
    passages = guard.support_passages(sentence)
    text = "\n\n".join(f"<passage>{p[:PASSAGE_CHARS]}</passage>" for p in passages)
    prompt = load_prompt(
        "spoiler_verify",
        passages=text or "(none match)",
        question=question or "(no question)",
        sentence=sentence.strip(),
    )
    return load_prompt("spoiler_verify_system"), prompt


class SupportVerifier:
    """One per answer: asks the answer's own model whether a doubtful sentence is supported."""

    def __init__(self, provider: ChatProvider, guard: SpoilerGuard, question: str) -> None:
        self.provider = provider
        self.guard = guard
        self.question = question
        self.calls = 0

    def request(self, sentence: str) -> TurnRequest:
        system, prompt = verification_prompt(self.guard, sentence, self.question)
        return TurnRequest(
            model=self.provider.model,
            system=system,
            messages=(UserMessage((Question(prompt),)),),
            max_tokens=MAX_TOKENS,
            tool_choice="none",
        )

    async def __call__(self, sentence: str) -> SupportCheck:
        request = self.request(sentence)
        self.calls += 1
        started = time.perf_counter()
        text: list[str] = []
        result: TurnResult | None = None
        try:
            async with asyncio.timeout(TIMEOUT):
                async for event in self.provider.stream_turn(request):
                    if isinstance(event, TurnResult):
                        result = event
                    elif isinstance(event, StreamText):
                        text.append(event.text)
        except Exception as exc:  # the lexical decision stands
            log.info("support check failed (%s); the lexical decision stands", exc)
            return SupportCheck(None, request, result, (time.perf_counter() - started) * 1000)
        reply = "".join(text) or (result.message.text if result is not None else "")
        return SupportCheck(verdict(reply), request, result, (time.perf_counter() - started) * 1000)


def unsupported_verdict(reply: str) -> bool:
    """Whether a reply says UNSUPPORTED: its first word ("UNSUPPORTED", "**Unsupported.**",
    "Not supported"). Anything else, an echo of the question included, keeps the sentence."""
    words = [w.strip(".,:;!*_\"'`()[]") for w in reply.upper().split()[:2]]
    if not words:
        return False
    return words[0] == "UNSUPPORTED" or words[:2] == ["NOT", "SUPPORTED"]


def verdict(reply: str) -> bool | None:
    """True for SUPPORTED, False for UNSUPPORTED (``unsupported_verdict``), None for a reply
    that is neither (an echo of the question, an essay): then the lexical decision stands."""
    if unsupported_verdict(reply):
        return False
    first = reply.upper().split()[:1]
    return True if first and first[0].strip(".,:;!*_\"'`()[]") == "SUPPORTED" else None
