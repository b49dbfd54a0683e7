"""The spoiler check on the second judge set (tests/core/agent/spoiler_data/cases_judge2.txt),
held out: written in session 8 by a helper who did not change the check, before any check ran on
it, and never used to choose a rule or a margin. Caught leaks and false alarms on honest
sentences, by kind and by book, with no model and with a model that verifies doubtful sentences
right (``spoiler_eval.oracle``: the best a verification call can do), for the lexical check alone
and with the test by meaning on WordLlama's chunk vectors (what the app uses) and on MiniLM's.

Its books are *A Christmas Carol* and *The Adventures of Sherlock Holmes* from the spoiler
books' cache (tests/bench/spoiler_books.py builds them). The library (the two books and their
chunk vectors; MiniLM's take minutes) is made once in that cache's ``judge2-library`` folder,
apart from the one bench_spoiler_meaning.py keeps; delete it to make it again.

Run: PYTHONPATH=$PWD:$PWD/tests/bench .venv/bin/python tests/bench/eval_spoiler_judge2.py
     [--misses] [--no-minilm]
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from common import machine
from spoiler_books import BOOKS as SPOILER_BOOKS
from spoiler_books import CACHE

from core.agent.spoiler_semantic import MINILM, STATIC, BookMeaning
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search.sentence_vectors import SentenceVectors
from core.search.vectors import BookVectors
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    EXTRA_BOOKS,
    KindResult,
    Verify,
    evaluate_kinds,
    oracle,
    total,
)

FILE = "cases_judge2.txt"
HOME = CACHE / "judge2-library"


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def line(label: str, *results: KindResult) -> str:
    caught = " -> ".join(f"{pct(r.caught, r.leaks):>17}" for r in results)
    alarms = " -> ".join(f"{pct(r.false_alarms, r.honest):>15}" for r in results)
    return f"    {label:<20} caught {caught}   false alarms {alarms}"


def library(minilm: bool) -> tuple[Library, dict[str, int]]:
    """The judge's own library: the two books and their chunk vectors (made once)."""
    known = HOME / "ids.json"
    lib = Library.open(resolve_paths(HOME / "home"))
    ids: dict[str, int] = json.loads(known.read_text()) if known.is_file() else {}
    for book in EXTRA_BOOKS:
        path = SPOILER_BOOKS / book.file
        if book.name in ids or not path.is_file():
            if not path.is_file():
                print(f"  ({book.name}: {path} is not there; its cases are skipped)")
            continue
        start = time.perf_counter()
        ids[book.name] = book_id = import_book(lib, path).book.id
        BookVectors(lib.db).index_book(book_id)
        if minilm:
            SentenceVectors(lib.db).index_book(book_id)
        print(f"  {book.name}: imported with chunk vectors in {time.perf_counter() - start:.0f} s")
        known.write_text(json.dumps(ids))
    return lib, ids


def ready(lib: Library, ids: dict[str, int], model: str) -> BookMeaning | None:
    meanings = BookMeaning((model,))
    for book_id in ids.values():
        meanings.wait(lib.db, book_id)
        found = meanings.get(lib.db, book_id)
        if found is None or found.model != model:
            print(f"  (book {book_id}: no {model} vectors; that column is left out)")
            return None
    return meanings


def report(
    lib: Library,
    ids: dict[str, int],
    variants: dict[str, BookMeaning | None],
    verify: Callable[[str], Verify] | None,
    label: str,
) -> dict[str, dict[str, KindResult]]:
    """By kind and in all (every book), then by book; returns the runs by variant."""
    runs = {
        name: evaluate_kinds(lib.db, ids, files=(FILE,), original=False, meaning=m, verify=verify)
        for name, m in variants.items()
    }
    last = list(runs.values())[-1]
    print(f"  {label} ({' -> '.join(variants)}):")
    for kind in last:
        print(line(kind, *(r[kind] for r in runs.values())))
    print(line("all", *(total(r) for r in runs.values())))
    for name, book_id in ids.items():
        one = {
            v: evaluate_kinds(
                lib.db, {name: book_id}, files=(FILE,), original=False, meaning=m, verify=verify
            )
            for v, m in variants.items()
        }
        for kind in list(one.values())[-1]:
            print(line(f"{name}/{kind}", *(r[kind] for r in one.values())))
        print(line(f"{name}/all", *(total(r) for r in one.values())))
    return runs


def main() -> None:
    minilm = "--no-minilm" not in sys.argv
    print(f"eval_spoiler_judge2 on {machine()}")
    lib, ids = library(minilm)
    if not ids:
        print("  no books: build them with tests/bench/spoiler_books.py")
        return
    print(f"  books: {', '.join(ids)}")
    variants: dict[str, BookMeaning | None] = {"lexical": None}
    for name, model in (("WordLlama (app)", STATIC), ("MiniLM", MINILM)):
        if model == MINILM and not minilm:
            continue
        meaning = ready(lib, ids, model)
        if meaning is not None:
            variants[name] = meaning
    runs = report(lib, ids, variants, None, "no model")
    report(lib, ids, variants, oracle, "oracle verifier")
    if "--misses" in sys.argv:
        for name, run in runs.items():
            for kind, r in run.items():
                for m in r.missed:
                    print(f"      {name} missed ({kind}): {m!r}")
                for m in r.alarms:
                    print(f"      {name} false alarm ({kind}): {m!r}")
    lib.close()


if __name__ == "__main__":
    main()
