"""Import speed, end to end (parse, pages, chunks, store, FTS index).

Targets (issue 2): ≥ 250 PDF pages/s; a 1 MB-of-text EPUB in < 0.5 s.
Run: .venv/bin/python tests/bench/bench_import.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from common import FIXTURES, machine, median, report

from core.books.importer import import_book
from core.books.pdf import shutdown_workers
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.books.epubgen import make_epub
from tests.support.pdfgen import book_pages, make_text_pdf

RUNS = 5


def timed_import(path: Path) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as home:
        lib = Library.open(resolve_paths(home))
        start = time.perf_counter()
        book = import_book(lib, path).book
        elapsed = time.perf_counter() - start
        lib.close()
    return elapsed, book.page_count


def main() -> None:
    print(f"bench_import on {machine()}; median of {RUNS} runs, each in a fresh library")
    alice_txt = FIXTURES / "books" / "alice_in_wonderland.txt"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pdf300 = make_text_pdf(
            work / "book300.pdf", book_pages(300, alice_txt), title="Three hundred"
        )
        pdf117 = make_text_pdf(
            work / "book117.pdf", book_pages(117, alice_txt), title="One-seventeen"
        )
        text = " ".join(alice_txt.read_text(encoding="utf-8").split())
        chapters = []
        size = 0
        n = 0
        while size < 1_000_000:
            body = "".join(f"<p>{text[i : i + 900]}</p>" for i in range(0, 40_000, 900))
            chapters.append((f"Chapter {n + 1}", body))
            size += 40_000
            n += 1
        epub1mb = make_epub(work / "big.epub", chapters, title="One megabyte")

        timed_import(pdf117)  # warm the PDF worker process and the imports
        for label, path, kind in (
            ("generated PDF, 300 pages", pdf300, "pdf"),
            ("generated PDF, 117 pages", pdf117, "pdf"),
            ("1 MB-of-text EPUB (generated)", epub1mb, "epub"),
            ("alice_in_wonderland.epub", FIXTURES / "books" / "alice_in_wonderland.epub", "epub"),
        ):
            times = []
            pages = 0
            for _ in range(RUNS):
                elapsed, pages = timed_import(path)
                times.append(elapsed)
            med = median(times)
            if kind == "pdf":
                rate = pages / med
                report(
                    label, f"{med * 1000:.0f} ms, {rate:.0f} pages/s", "≥ 250 pages/s", rate >= 250
                )
            else:
                target_ok = med < 0.5
                report(label, f"{med * 1000:.0f} ms ({pages} pages)", "< 500 ms", target_ok)
        cold = []
        shutdown_workers()
        elapsed, pages = timed_import(pdf300)
        cold.append(elapsed)
        report(
            "300-page PDF, worker process cold",
            f"{elapsed * 1000:.0f} ms, {pages / elapsed:.0f} pages/s",
            "≥ 250 pages/s",
            pages / elapsed >= 250,
        )
    shutdown_workers()


if __name__ == "__main__":
    main()
