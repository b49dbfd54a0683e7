"""What reading the book's own CSS (core/books/bookcss.py) adds to parsing an EPUB: the same
books parsed with and without it, interleaved, medians of several runs.

Run: .venv/bin/python tests/bench/bench_bookcss.py [EPUB ...]
(default: the Alice fixture; Standard Ebooks' books, built by build_se_corpus.py, carry the
richest CSS)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from common import FIXTURES, machine, median, report

RUNS = 7


def main() -> None:
    import core.books.epub as epub
    import core.books.htmlblocks as htmlblocks

    with_css = htmlblocks.html_document

    def without_css(*args: Any, stylesheet: object = None, **kwargs: Any) -> Any:
        return with_css(*args, **kwargs)

    books = [Path(a) for a in sys.argv[1:]] or [FIXTURES / "books" / "alice_in_wonderland.epub"]
    print(f"bench_bookcss on {machine()}")
    for book in books:
        on: list[float] = []
        off: list[float] = []
        for _ in range(RUNS):
            for html_document, times in ((with_css, on), (without_css, off)):
                epub.html_document = html_document  # type: ignore[assignment]
                started = time.perf_counter()
                epub.parse_epub(book)
                times.append((time.perf_counter() - started) * 1000)
        epub.html_document = with_css
        extra = median(on) - median(off)
        report(
            f"parse {book.name[:40]} with its CSS",
            f"{median(on):.0f} ms vs {median(off):.0f} ms without (+{extra:.0f} ms)",
            "",
            True,
        )


if __name__ == "__main__":
    main()
