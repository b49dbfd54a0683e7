"""The spoiler check's test by meaning (issue 23, third session: core.agent.spoiler_semantic):
the evaluation set before (lexical alone) and after (with the book's chunk vectors), by kind
and by book, with no model and with a model that verifies doubtful sentences right (the
oracle), and what it costs per sentence.

The margin (spoiler_semantic.MARGINS) was chosen on the issue-16 files and cases.txt ("tune")
and is judged on cases_new.txt and cases_sem.txt ("judge"); cases_sem.txt (40 plain-word
sentences written for this session) is reported apart so that the figures on the older set
stay comparable with earlier sessions.

Run: .venv/bin/python tests/bench/bench_spoiler_meaning.py
(A Christmas Carol and Sherlock Holmes come in when tests/bench/spoiler_books.py built them.)
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from common import FIXTURES, machine, median, percentile, report
from spoiler_books import CACHE

from core.agent.spoiler_semantic import BookMeaning
from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    CASE_FILES,
    EXTRA_BOOKS,
    SEM_FILE,
    KindResult,
    cases,
    evaluate_kinds,
    load_meanings,
    oracle,
    total,
)


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def line(label: str, before: KindResult, after: KindResult) -> str:
    return (
        f"    {label:<28} caught {pct(before.caught, before.leaks):>16} -> "
        f"{pct(after.caught, after.leaks):<16} false alarms "
        f"{pct(before.false_alarms, before.honest):>14} -> {pct(after.false_alarms, after.honest)}"
    )


def compare(
    lib: Library, ids: dict[str, int], meanings: BookMeaning, label: str, **kw: object
) -> None:
    """Before -> after by kind and in all, for each verification (none, the oracle)."""
    for verify_label, verify in (("no model", None), ("oracle verifier", oracle)):
        before = evaluate_kinds(lib.db, ids, verify=verify, **kw)  # type: ignore[arg-type]
        after = evaluate_kinds(
            lib.db,
            ids,
            verify=verify,
            meaning=meanings,
            **kw,  # type: ignore[arg-type]
        )
        print(f"  {label}, {verify_label}:")
        for kind in after:
            print(line(kind, before[kind], after[kind]))
        print(line("all", total(before), total(after)))
        if verify is None and label.startswith("judge"):
            for kind, r in after.items():
                for m in r.missed:
                    print(f"      missed ({kind}): {m}")
                for m in r.alarms:
                    print(f"      false alarm ({kind}): {m}")


def by_book(lib: Library, ids: dict[str, int], meanings: BookMeaning) -> None:
    files = (*CASE_FILES, SEM_FILE)
    print("  by book, plain words and all kinds, no model (all files):")
    for name, book_id in ids.items():
        one = {name: book_id}
        before = evaluate_kinds(lib.db, one, files=files)
        after = evaluate_kinds(lib.db, one, files=files, meaning=meanings)
        if "plain" in after:
            print(line(f"{name}/plain", before["plain"], after["plain"]))
        print(line(f"{name}/all", total(before), total(after)))


def cost(lib: Library, ids: dict[str, int], meanings: BookMeaning) -> None:
    """Per sentence, interleaved (order swapped each round, after a warm-up round): the whole
    check without and with the test by meaning, and the test by meaning alone (one embedding
    and a dot product); then what a first question waits for with the vectors not loaded."""
    books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    texts = [(c.book, c.text) for c in cases(ids, (*CASE_FILES, SEM_FILE)) if not c.trick]
    indexes = {name: SpoilerIndex.build(lib.db, book_id) for name, book_id in ids.items()}
    times: dict[str, list[float]] = {"lexical": [], "with meaning": [], "meaning alone": []}
    sources: list[tuple[str, BookMeaning | None]] = [("lexical", None), ("with meaning", meanings)]
    for round_ in range(4):
        for name, text in texts:
            read_to = books[name].read_to
            for label, source in sources if round_ % 2 else sources[::-1]:
                guard = SpoilerGuard(
                    indexes[name], read_to=read_to, question="What happens?", meaning=source
                )
                start = time.perf_counter()
                guard.check(text)
                if round_:
                    times[label].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            guard.later_in_meaning(text)
            if round_:
                times["meaning alone"].append((time.perf_counter() - start) * 1000)
    for label, t in times.items():
        report(
            f"check per sentence, {label}",
            f"median {median(t):.2f} ms, p95 {percentile(t, 95):.2f} ms",
            "+ a few ms",
            True,
        )
    fresh = BookMeaning()  # a first question: the book's vectors not loaded in this process
    name, book_id = next(iter(ids.items()))
    start = time.perf_counter()
    guard = SpoilerGuard(indexes[name], read_to=books[name].read_to, question="", meaning=fresh)
    held = guard.later_in_meaning("Later she grows so tall that her head is far above the trees.")
    first = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    fresh.wait(lib.db, book_id)
    loaded = (time.perf_counter() - start) * 1000
    report(
        "first question: guard + test by meaning, vectors not loaded",
        f"{first:.2f} ms (lexical decision: {'held' if held else 'not held'})",
        "no wait",
        first < 5,
    )
    report("a book's vectors loaded, in the background", f"{loaded:.0f} ms", "-", True)


def main() -> None:
    print(f"bench_spoiler_meaning on {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = {b.name: import_book(lib, FIXTURES / "books" / b.file).book.id for b in BOOKS}
        for extra in EXTRA_BOOKS:
            if (CACHE / extra.file).is_file():
                ids[extra.name] = import_book(lib, CACHE / extra.file).book.id
        print(f"  books: {', '.join(ids)}")
        start = time.perf_counter()
        meanings = load_meanings(lib.db, ids.values())
        print(f"  chunk vectors written and loaded in {time.perf_counter() - start:.1f} s")
        compare(lib, ids, meanings, "tune (issue-16 files + cases.txt)", files=("cases.txt",))
        compare(
            lib,
            ids,
            meanings,
            "judge (cases_new.txt + cases_sem.txt)",
            files=("cases_new.txt", SEM_FILE),
            original=False,
        )
        compare(lib, ids, meanings, "old set (all before this session)")
        compare(lib, ids, meanings, "new file cases_sem.txt", files=(SEM_FILE,), original=False)
        by_book(lib, ids, meanings)
        cost(lib, ids, meanings)
        lib.close()


if __name__ == "__main__":
    main()
