"""Sentences and word stems of a passage, for finding where in it a question is answered
(search's re-ranking and passages mode's highlighted sentence)."""

from __future__ import annotations

import math
import re
from bisect import bisect_right

_SENTENCE = re.compile(r"\S.*?(?:[.!?…]+[\"”’')\]]*(?=\s|$)|$)", re.DOTALL)
_SPLIT = re.compile(r"[^\w’']+")
STOP = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it "
    "its me my of on or she so that the their them then there they this to was we were what "
    "when where which who whom why will with would you your about into than not no".split()
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (spaces folded), each exact text of it."""
    return [m.group(0).strip() for m in _SENTENCE.finditer(" ".join(text.split()))]


def stems(text: str) -> set[str]:
    """Crude stems (the first five letters) of the meaningful words of ``text``."""
    return {w[:5] for w in _SPLIT.split(text.lower()) if len(w) > 2 and w.strip("’'") not in STOP}


_END = re.compile(r"[.!?…]+[\"”’')\]]*(?=\s|$)")
_WORD = re.compile(r"\w+")


def _pattern(query: str) -> re.Pattern[str] | None:
    wanted = sorted(stems(query), key=len, reverse=True)
    if not wanted:
        return None
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in wanted) + ")", re.IGNORECASE)


def matched_sentences(query: str, text: str) -> list[set[str]]:
    """For each sentence of ``text``, which of the query's stems it holds (one regular
    expression pass: re-ranking runs on every search)."""
    pattern = _pattern(query)
    ends = [m.end() for m in _END.finditer(text)]
    found: list[set[str]] = [set() for _ in range(len(ends) + 1)]
    if pattern is None:
        return found
    for m in pattern.finditer(text):
        found[bisect_right(ends, m.start())].add(m.group(1).lower())
    return found


def weights(chunks: list[list[set[str]]]) -> dict[str, float]:
    """How telling each query stem is among the chunks (inverse document frequency)."""
    count: dict[str, int] = {}
    for found in chunks:
        for stem in set().union(*found):
            count[stem] = count.get(stem, 0) + 1
    n = len(chunks)
    return {t: math.log(1 + n / (1 + c)) for t, c in count.items()}


def closeness(found: list[set[str]], weight: dict[str, float], span: int = 2) -> float:
    """The share of the query's weight (among the stems found anywhere) that ``span``
    consecutive sentences hold: a passage whose words cluster in one place beats one that
    scatters them."""
    total = sum(weight.values())
    if not total:
        return 0.0
    best = 0.0
    for i in range(len(found)):
        held: set[str] = set().union(*found[i : i + span])
        best = max(best, sum(weight.get(t, 0.0) for t in held))
    return best / total
