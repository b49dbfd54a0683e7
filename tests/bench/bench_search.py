"""Search latency on a book with about 3 MB of text.

Target (issue 2): p95 < 5 ms per query. Run: .venv/bin/python tests/bench/bench_search.py
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from common import FIXTURES, machine, median, percentile, report

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.store.library import Library

QUERIES = [
    "Cheshire Cat",
    "Gregor",
    "the Queen of Hearts",
    '"off with her head"',
    "why did Alice cry",
    "sister",
    "the Mock Turtle's story",
    "what is the Hatter's riddle?",
    "father apple",
    "rabbit watch",
    "mother violin",
    "key",
    "garden",
    "tea party",
    "chief clerk",
    "insect",
    "bed",
    "door locked",
    "Duchess baby pig",
    "Caterpillar hookah advice",
    "lodgers",
    "Grete",
    "AND OR NOT",
    "(((",
]


def main() -> None:
    print(f"bench_search on {machine()}")
    books = FIXTURES / "books"
    parts = [
        (books / name).read_text(encoding="utf-8")
        for name in ("alice_in_wonderland.txt", "metamorphosis.txt")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "three_megabytes.txt"
        chunks = []
        size = 0
        i = 0
        while size < 3_000_000:
            piece = parts[i % 2].replace("*** START", "*** BEGIN").replace("*** END", "*** FINISH")
            chunks.append(piece)
            size += len(piece)
            i += 1
        big.write_text("\n\n".join(chunks), encoding="utf-8")
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        search_book = BookSearch(lib.db).search_book
        book = import_book(lib, big).book
        print(f"  book: {size / 1e6:.1f} MB of text, {book.page_count} pages")
        rng = random.Random(7)
        times: list[float] = []
        for q in QUERIES * 2:
            search_book(book.id, q)  # warm the page cache
        for _ in range(200):
            query = rng.choice(QUERIES)
            bound = rng.choice([None, book.page_count // 3, book.page_count])
            start = time.perf_counter()
            search_book(book.id, query, limit=5, until_page=bound)
            times.append((time.perf_counter() - start) * 1000)
        p95 = percentile(times, 95)
        report(
            "search_book, 200 queries",
            f"median {median(times):.2f} ms, p95 {p95:.2f} ms",
            "p95 < 5 ms",
            p95 < 5,
        )
        lib.close()


if __name__ == "__main__":
    main()
