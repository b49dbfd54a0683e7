"""Japanese and Chinese search (issue 45, item 1): recall on phrases sampled from the two
novels in tests/fixtures (the word index alone, as before, and with ``cjk_index``), the
import time of every fixture book with and without the CJK index (interleaved, median of
runs) and the database's size.

    .venv/bin/python tests/bench/bench_cjk_search.py [--runs N] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, cjk
from core.store import cjk_index
from core.store.library import Library
from tests.core.search.test_cjk_search import (
    HONGLOUMENG,
    KOKORO,
    found,
    sample_phrases,
)

BOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "books"


@contextmanager
def word_index_only():  # type: ignore[no-untyped-def]
    """Search and import as before ``cjk_index``."""
    with (
        mock.patch.object(cjk, "route", lambda sql, match: (sql, match)),
        mock.patch.object(cjk_index, "index_rows", lambda cursor, rows: 0),
    ):
        yield


def imported(path: Path, home: Path) -> tuple[float, Library, int]:
    lib = Library.open(resolve_paths(home))
    start = time.perf_counter()
    book = import_book(lib, path).book
    return time.perf_counter() - start, lib, book.id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    runs = 1 if args.smoke else args.runs
    phrases = 5 if args.smoke else 60
    for path in (KOKORO, HONGLOUMENG):
        sample = sample_phrases(path.read_text(encoding="utf-8"), phrases, seed=45)
        for label, before in (("word index only", True), ("with cjk_index", False)):
            with tempfile.TemporaryDirectory() as home:
                ctx = word_index_only() if before else mock.patch.object(sys, "argv", sys.argv)
                with ctx:
                    _, lib, book_id = imported(path, Path(home))
                    search = BookSearch(lib.db)
                    hits = sum(found(search, lib.get_book(book_id), p) for p in sample)
                    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                    size = resolve_paths(Path(home)).database.stat().st_size
                lib.close()
            print(f"{path.name}: {label}: recall {hits}/{len(sample)} db {size / 1e6:.2f} MB")
    names = [KOKORO, HONGLOUMENG] + (
        []
        if args.smoke
        else sorted(
            p
            for p in BOOKS.iterdir()
            if p.suffix in (".epub", ".txt")
            and p.stat().st_size > 10_000
            and "_excerpt" not in p.name
        )
    )
    for path in names:
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(runs):
            for label in ("before", "after"):
                with tempfile.TemporaryDirectory() as home:
                    if label == "before":
                        with word_index_only():
                            seconds, lib, _ = imported(path, Path(home))
                    else:
                        seconds, lib, _ = imported(path, Path(home))
                    lib.close()
                times[label].append(seconds)
        b, a = statistics.median(times["before"]), statistics.median(times["after"])
        print(f"import {path.name}: before {b * 1000:.0f} ms, after {a * 1000:.0f} ms")


if __name__ == "__main__":
    main()
