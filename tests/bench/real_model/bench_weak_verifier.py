"""How good must a verifying model be for issue 23's aim (>= 95 % of leaks caught, <= 2 % false
alarms)? The spoiler evaluation (the product's check with WordLlama's test by meaning, as
``bench_spoiler_meaning.py`` runs it) with a *weak verifier*: the oracle's verdict on each
doubtful sentence, wrong with a given probability, or no verdict (a timeout: the lexical
decision stands) with another.

* ``sens``: P(UNSUPPORTED | the doubtful sentence leaks): a leak the model lets through is a miss;
* ``spec``: P(SUPPORTED | the doubtful sentence is honest): an honest one it rejects is an alarm;
* ``none``: P(no verdict).

The symmetric curve (sens = spec = 1 - error) and a grid, on the tune files (the issue-16 files
+ cases.txt) and the judge files (cases_new.txt + cases_sem.txt), mean of ``--seeds`` draws (a
draw is seeded per sentence, so it is reproducible). ``--sens/--spec/--none`` adds one row for
rates measured on a real model (bench_real_verifier.py prints them).

Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/real_model/bench_weak_verifier.py
"""

from __future__ import annotations

import argparse
import random
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_spoiler_meaning import library, ready
from common import machine

from core.agent.spoiler_semantic import STATIC
from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from tests.core.agent.spoiler_eval import (
    BOOKS,
    EXTRA_BOOKS,
    SEM_FILE,
    cases,
    evaluate_kinds,
    oracle,
    sentences,
    total,
)

SETS: dict[str, dict[str, Any]] = {
    "tune": {"files": ("cases.txt",)},
    "judge": {"files": ("cases_new.txt", SEM_FILE), "original": False},
}


@dataclass(frozen=True)
class Sentence:
    book: str
    kind: str
    leak: bool
    question: str
    segments: tuple[tuple[bool, bool, str], ...]  # (held by the check, doubtful, text)


def sentences_of(lib: Any, ids: dict[str, int], meaning: Any, kw: dict[str, Any]) -> list[Sentence]:
    """Every sentence of the set through a fresh guard, as ``evaluate_kinds`` runs them (the
    verdicts do not change the segments, so a verifier is then replayed in microseconds)."""
    books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    indexes = {name: SpoilerIndex.build(lib.db, book_id) for name, book_id in ids.items()}
    todo: list[tuple[str, str, bool, str, str]] = []
    if kw.get("original", True):
        for book in BOOKS:
            for part in ("", "_heldout"):
                for leak, end in ((True, "_leaks"), (False, "_honest")):
                    for s in sentences(f"{book.name}{part}{end}"):
                        todo.append((book.name, "original", leak, s, book.question))
    for case in cases(ids, kw["files"]):
        todo.append(
            (case.book, case.kind, case.leak, case.text, case.question or books[case.book].question)
        )
    out = []
    for name, kind, leak, text, question in todo:
        book = books[name]
        guard = SpoilerGuard(
            indexes[name], read_to=book.read_to, question=question, meaning=meaning
        )
        segs = tuple((s.hidden, s.doubtful, s.text) for s in guard.feed(text) + guard.flush())
        out.append(Sentence(name, kind, leak, question, segs))
    return out


def verdict(
    seed: int, sentence: Sentence, text: str, sens: float, spec: float, none: float
) -> bool | None:
    """The weak verifier's verdict (True: SUPPORTED), the same for the same sentence and seed."""
    rng = random.Random(zlib.crc32(f"{seed}\0{sentence.question}\0{text}".encode()))
    if rng.random() < none:
        return None
    right = rng.random() < (sens if sentence.leak else spec)
    return (not sentence.leak) if right else sentence.leak


def held(sentence: Sentence, seed: int, sens: float, spec: float, none: float) -> bool:
    """As ``spoiler_eval.checked`` decides: a doubtful segment's verdict replaces the check's."""
    hidden = False
    for was_held, doubtful, text in sentence.segments:
        shown = not was_held
        if doubtful:
            supported = verdict(seed, sentence, text, sens, spec, none)
            if supported is not None:
                shown = supported
        hidden = hidden or not shown
    return hidden


def measure(
    items: list[Sentence], sens: float, spec: float, none: float, seeds: int
) -> tuple[float, float]:
    """Mean caught and false-alarm rates over the seeds."""
    leaks = [s for s in items if s.leak]
    honest = [s for s in items if not s.leak]
    caught = alarms = 0.0
    for seed in range(seeds):
        caught += sum(held(s, seed, sens, spec, none) for s in leaks) / len(leaks)
        alarms += sum(held(s, seed, sens, spec, none) for s in honest) / len(honest)
    return caught / seeds, alarms / seeds


def mark(caught: float, alarms: float) -> str:
    return "meets 95/2" if caught >= 0.95 and alarms <= 0.02 else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sens", type=float, help="a measured model's P(UNSUPPORTED | leak)")
    parser.add_argument("--spec", type=float, help="a measured model's P(SUPPORTED | honest)")
    parser.add_argument("--none", type=float, default=0.0, help="its P(no verdict)")
    args = parser.parse_args()
    print(f"bench_weak_verifier on {machine()}")
    lib, ids = library()
    meaning = ready(lib, ids, (STATIC,))
    for name, kw in SETS.items():
        items = sentences_of(lib, ids, meaning, kw)
        for label, verify, rates in (("no model", None, (1, 1, 1)), ("oracle", oracle, (1, 1, 0))):
            r = total(evaluate_kinds(lib.db, ids, verify=verify, meaning=meaning, **kw))
            c, a = measure(items, *rates, 1)
            if (round(c * r.leaks), round(a * r.honest)) != (r.caught, r.false_alarms):
                raise SystemExit(f"{name}, {label}: replay differs from evaluate_kinds")
        leaks = sum(s.leak for s in items)
        doubtful = [s for s in items if any(d for _h, d, _t in s.segments)]
        c, a = measure(items, 1, 1, 1, 1)
        print(
            f"\n  set {name}: {leaks} leaks, {len(items) - leaks} honest, {len(doubtful)} with a "
            f"doubtful sentence; no model: caught {c:.1%}, false alarms {a:.1%}"
        )
        print(
            f"    symmetric error (sens = spec = 1 - error), every call answered, {args.seeds} seeds:"
        )
        for error in (0.0, 0.02, 0.05, 0.10, 0.15, 0.20, 0.30, 0.50):
            c, a = measure(items, 1 - error, 1 - error, 0.0, args.seeds)
            print(f"      error {error:4.0%}: caught {c:6.1%}, false alarms {a:5.1%}  {mark(c, a)}")
        specs = (1.0, 0.98, 0.95, 0.9, 0.8, 0.6)
        print("    grid: caught / false alarms (rows sens, columns spec), every call answered:")
        print("      sens \\ spec" + "".join(f"{x:>15.0%}" for x in specs))
        for sens in (1.0, 0.95, 0.9, 0.8, 0.6, 0.4):
            cells = []
            for spec in specs:
                c, a = measure(items, sens, spec, 0.0, args.seeds)
                cells.append(f"{c:5.1%}/{a:4.1%}{'*' if mark(c, a) else ' '}")
            print(f"      {sens:>10.0%} " + "".join(f"{x:>15}" for x in cells))
        print("      (* meets 95/2)")
        print("    a right verifier with timeouts (no verdict: the lexical decision stands):")
        for none in (0.1, 0.25, 0.5, 0.9):
            c, a = measure(items, 1.0, 1.0, none, args.seeds)
            print(
                f"      no verdict {none:4.0%}: caught {c:6.1%}, false alarms {a:5.1%}  {mark(c, a)}"
            )
        if args.sens is not None and args.spec is not None:
            c, a = measure(items, args.sens, args.spec, args.none, args.seeds)
            print(
                f"    measured rates sens {args.sens:.0%}, spec {args.spec:.0%}, none "
                f"{args.none:.0%}: caught {c:.1%}, false alarms {a:.1%}  {mark(c, a)}"
            )
    lib.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
