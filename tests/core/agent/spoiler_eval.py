"""The spoiler check's evaluation on hand-written answers (tests/core/agent/spoiler_data/).

Used by tests/core/agent/test_spoilers.py (which asserts the aims) and
tests/bench/bench_spoilers.py (which prints the figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import peewee as pw

from core.agent.spoilers import SpoilerGuard, SpoilerIndex, SpoilerTerm

DATA = Path(__file__).resolve().parent / "spoiler_data"


@dataclass(frozen=True)
class EvalBook:
    name: str  # prefix of the data files
    file: str  # fixture in shared/fixtures/books
    read_to: int  # the end of the part the answers may use
    question: str


BOOKS = (
    EvalBook(
        "alice",
        "alice_in_wonderland.epub",
        21,  # chapter IV starts on p. 22 (checked against the contents in the tests)
        "What has happened to Alice so far, and how does her adventure go on?",
    ),
    EvalBook(
        "metamorphosis",
        "metamorphosis.epub",
        28,  # part II starts on p. 29 (checked against the contents in the tests)
        "Why was Gregor transformed, and what will become of him and his family?",
    ),
)


def sentences(name: str) -> list[str]:
    text = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


@dataclass
class EvalResult:
    leaks: int = 0
    caught: int = 0
    honest: int = 0
    false_alarms: int = 0
    missed: list[str] = field(default_factory=list)
    alarms: list[tuple[str, tuple[SpoilerTerm, ...]]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.leaks if self.leaks else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.honest if self.honest else 0.0


def combined(*results: EvalResult) -> EvalResult:
    out = EvalResult()
    for r in results:
        out.leaks += r.leaks
        out.caught += r.caught
        out.honest += r.honest
        out.false_alarms += r.false_alarms
        out.missed += r.missed
        out.alarms += r.alarms
    return out


def guard(index: SpoilerIndex, book: EvalBook) -> SpoilerGuard:
    return SpoilerGuard(index, read_to=book.read_to, question=book.question)


def flagged(guard: SpoilerGuard, sentence: str) -> tuple[SpoilerTerm, ...]:
    segments = guard.feed(sentence) + guard.flush()
    return tuple(t for s in segments if s.hidden for t in s.terms)


def evaluate(db: pw.SqliteDatabase, book_ids: dict[str, int], part: str = "") -> EvalResult:
    """Run every sentence of the set through a fresh guard; ``book_ids`` maps name → book id.
    ``part`` is "" for the main set, "_heldout" for the set written after the first tuning."""
    result = EvalResult()
    for book in BOOKS:
        index = SpoilerIndex.build(db, book_ids[book.name])
        for sentence in sentences(f"{book.name}{part}_leaks"):
            result.leaks += 1
            if flagged(guard(index, book), sentence):
                result.caught += 1
            else:
                result.missed.append(f"{book.name}: {sentence}")
        for sentence in sentences(f"{book.name}{part}_honest"):
            result.honest += 1
            terms = flagged(guard(index, book), sentence)
            if terms:
                result.false_alarms += 1
                result.alarms.append((f"{book.name}: {sentence}", terms))
    return result
