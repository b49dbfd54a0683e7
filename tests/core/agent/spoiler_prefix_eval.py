"""What the sentence pieces shown while an answer is written (issue 41,
``SpoilerGuard.prefix``) still leak, on the evaluation set (tests/core/agent/spoiler_data/):
each case streamed in 4-character deltas at 200 a second, as the chat shows it.

A *prefix leak* is a word the reader was shown of a sentence that was then held back: each
piece passed the check on the sentence so far, but the whole sentence did not. Used by
tests/bench/bench_spoilers.py (the figures) and tests/core/agent/test_spoiler_prefix.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import peewee as pw

from core.agent.spoiler_semantic import BookMeaning
from core.agent.spoilers import Segment, SpoilerGuard, SpoilerIndex
from tests.core.agent.spoiler_eval import (
    CASE_FILES,
    EvalBook,
    Verify,
    each_sentence,
)

CHUNK = 4  # characters a delta
TICK = 0.005  # seconds between deltas (200 a second)


@dataclass
class PrefixResult:
    held: int = 0  # sentences held back at their end
    held_words: int = 0  # their words
    leaked: int = 0  # of those, sentences with words shown before they were held
    leaked_words: int = 0  # the words shown of them
    shown: int = 0  # sentences shown
    shown_words: int = 0  # their words
    early_words: int = 0  # of those, words shown before the sentence ended
    examples: list[str] = field(default_factory=list)

    def add(self, other: PrefixResult) -> None:
        for name in ("held", "held_words", "leaked", "leaked_words", "shown", "shown_words"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.early_words += other.early_words
        self.examples += other.examples


def streamed(
    guard: SpoilerGuard, text: str, verify: Verify | None = None, leak: bool = False
) -> PrefixResult:
    """``text`` streamed through ``guard`` as the chat streams it, pieces shown as they pass;
    each sentence decided at its end (with ``verify``, doubtful ones as the loop decides)."""
    out = PrefixResult()
    segments: list[Segment] = []
    now = 0.0
    for k in range(0, len(text), CHUNK):
        now += TICK
        segments += guard.feed(text[k : k + CHUNK]) + guard.release()
        guard.prefix(now)
    segments += guard.flush()
    for s in segments:
        hidden = s.hidden
        if s.doubtful and verify is not None:
            supported, _chars = verify(guard, s, leak)
            if supported is not None:
                hidden = not supported
        words = len(s.text.split())
        early = len(s.text[: s.shown].split())
        if hidden:
            out.held += 1
            out.held_words += words
            if early:
                out.leaked += 1
                out.leaked_words += early
                out.examples.append(f"{s.text[: s.shown]}| {s.rest}")
        else:
            out.shown += 1
            out.shown_words += words
            out.early_words += early
    return out


def prefix_kinds(
    db: pw.SqliteDatabase,
    book_ids: dict[str, int],
    verify: Callable[[str], Verify] | None = None,
    files: Iterable[str] = CASE_FILES,
    meaning: BookMeaning | None = None,
) -> dict[str, dict[bool, PrefixResult]]:
    """By kind (as ``spoiler_eval.evaluate_kinds``), for leaks (True) and honest sentences
    (False): what was held, and what of it was shown before it was held."""
    results: dict[str, dict[bool, PrefixResult]] = {}
    indexes = {name: SpoilerIndex.build(db, bid) for name, bid in book_ids.items()}

    def one(kind: str, book: EvalBook, leak: bool, text: str, question: str) -> None:
        guard = SpoilerGuard(
            indexes[book.name], read_to=book.read_to, question=question, meaning=meaning
        )
        found = streamed(guard, text, verify(question) if verify else None, leak)
        results.setdefault(kind, {}).setdefault(leak, PrefixResult()).add(found)

    for item in each_sentence(book_ids, files):
        one(*item)
    return results
