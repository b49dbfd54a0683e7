"""The passages a local model reads, within a budget of tokens (issue 40, item 3).

A local model reads its prompt at about 33 tokens a second on two cores: each 1,000 tokens of
passages costs the reader 30 s before the first word. So a local model gets, of each passage,
the sentence most likely to answer (the bold sentence of passages mode,
``answer_sentence.pick``) and its neighbours, the best passage more room than the others, all
within a budget the reader chooses: ``speed`` (the default) or ``breadth``.
"""

from __future__ import annotations

from dataclasses import replace

from core.agent.providers.answer_sentence import pick
from core.agent.providers.passages_reply import whole_sentences
from core.agent.types import Passage

BUDGETS = {"speed": 450, "breadth": 1500}  # tokens of passages
CHARS_PER_TOKEN = 4.0  # English prose in Qwen's and Llama's tokenizers, about
LEAN = (3.0, 2.0)  # the first two passages' room against the others' (1 each)
MIN_SHARE = 120  # characters: a passage with less room than this is left out


def tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def within_budget(passages: tuple[Passage, ...], query: str, budget: int) -> tuple[Passage, ...]:
    """``passages`` (best first) cut to their answering sentences and neighbours, about
    ``budget`` tokens in all. Pages and titles stay; each text is exact sentences of the
    passage, "…" where some were left out."""
    if not passages:
        return ()
    split = [whole_sentences(p.text) or [" ".join(p.text.split())] for p in passages]
    spans = pick(split, query)
    room = budget * CHARS_PER_TOKEN
    weights = [LEAN[i] if i < len(LEAN) else 1.0 for i in range(len(passages))]
    out: list[Passage] = []
    for p, parts, (first, size), weight in zip(passages, split, spans, weights, strict=True):
        share = room * weight / sum(weights)
        if share < MIN_SHARE:
            continue
        lo, hi = first, min(len(parts), first + size)
        used = sum(len(s) + 1 for s in parts[lo:hi])
        while True:
            grown = False
            if hi < len(parts) and used + len(parts[hi]) <= share:
                used += len(parts[hi]) + 1
                hi += 1
                grown = True
            if lo > 0 and used + len(parts[lo - 1]) <= share:
                lo -= 1
                used += len(parts[lo]) + 1
                grown = True
            if not grown:
                break
        text = " ".join(parts[lo:hi])
        text = ("… " if lo > 0 else "") + text + (" …" if hi < len(parts) else "")
        out.append(replace(p, text=text))
    return tuple(out)
