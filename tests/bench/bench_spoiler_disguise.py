"""Later names in disguise (issue 46, item 1): the disguise set (spoiler_data/cases_disguise.txt,
every family on every book) caught before and after the disguise check, per book and family,
the false alarms on its honest controls and on every honest sentence of the evaluation sets
(issue 16's files and the case files by kind), and the cost per sentence. Books: Alice (read
to p. 21), Metamorphosis (p. 28) and Pride and Prejudice (p. 30, the issue's own examples).

"Before" is the same code with ``SpoilerGuard.disguises`` off: the check as it was. Both run
in one process, interleaved; the cost is the median of several runs.
Run: .venv/bin/python tests/bench/bench_spoiler_disguise.py [--smoke]
(``--smoke``: Alice only, one run.) Uses A Christmas Carol and Sherlock Holmes too when
tests/bench/spoiler_books.py has built them (the disguise set has lines for the fixture books).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from common import FIXTURES, machine, median

from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.agent.spoiler_disguises import DISGUISE_BOOKS, disguise_cases, evaluate_disguises
from tests.core.agent.spoiler_eval import evaluate_kinds, total


def main() -> None:
    smoke = "--smoke" in sys.argv
    print(f"bench_spoiler_disguise on {machine()}")
    wanted = DISGUISE_BOOKS[:1] if smoke else DISGUISE_BOOKS
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = {b.name: import_book(lib, FIXTURES / "books" / b.file).book.id for b in wanted}
        print("  disguise set: caught (before -> after), by book and family")
        for name, book_id in ids.items():
            before = evaluate_disguises(lib.db, {name: book_id}, disguises=False)
            after = evaluate_disguises(lib.db, {name: book_id})
            for kind, a in after.items():
                b = before[kind]
                if a.leaks:
                    print(
                        f"    {name + '/' + kind:<40} {b.caught:>2}/{b.leaks} -> {a.caught}/{a.leaks}"
                    )
                if a.honest:
                    print(
                        f"    {name + '/' + kind:<40} false alarms {b.false_alarms}/{b.honest}"
                        f" -> {a.false_alarms}/{a.honest}"
                    )
            leaks = [k for k in after if after[k].leaks]
            caught_b = sum(before[k].caught for k in leaks)
            caught_a = sum(after[k].caught for k in leaks)
            n = sum(after[k].leaks for k in leaks)
            print(
                f"    {name + ', all families':<40} {caught_b}/{n} = {caught_b / n:.0%} -> "
                f"{caught_a}/{n} = {caught_a / n:.0%}"
            )
        print("  false alarms on the honest sentences of the evaluation sets (no model)")
        for label, on in (("before", False), ("after", True)):

            def make(
                index: SpoilerIndex, book: object, question: str, on: bool = on
            ) -> SpoilerGuard:
                guard = SpoilerGuard(index, read_to=book.read_to, question=question)  # type: ignore[attr-defined]
                guard.disguises = on
                return guard

            kinds = evaluate_kinds(lib.db, ids, make_guard=make)
            everything = total(kinds)
            by_kind = ", ".join(f"{k} {r.false_alarms}/{r.honest}" for k, r in kinds.items())
            print(
                f"    {label}: {everything.false_alarms}/{everything.honest} = "
                f"{everything.false_alarm_rate:.1%}; leaks caught {everything.caught}/"
                f"{everything.leaks} ({by_kind})"
            )
        texts = [c.text for c in disguise_cases(set(ids))]
        index = SpoilerIndex.build(lib.db, ids[wanted[0].name])
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(1 if smoke else 5):
            for on in (False, True):
                start = time.perf_counter()
                for text in texts:
                    guard = SpoilerGuard(
                        index, read_to=wanted[0].read_to, question="", meaning=None
                    )
                    guard.disguises = on
                    guard.feed(text)
                    guard.flush()
                times[on].append((time.perf_counter() - start) * 1000 / len(texts))
        print(
            f"  cost per sentence: before {median(times[False]):.2f} ms, after "
            f"{median(times[True]):.2f} ms (median of runs)"
        )
        lib.close()


if __name__ == "__main__":
    main()
