"""Import speed, end to end (parse, pages, chunks, store, FTS index).

Targets (issue 2): ≥ 250 PDF pages/s; a 1 MB-of-text EPUB in < 0.5 s.
Run: .venv/bin/python tests/bench/bench_import.py
     .venv/bin/python tests/bench/bench_import.py --memory [REF]   (issue 27, item 9: RSS
     after importing a 16 MiB EPUB, and worker processes left 10 s after a PDF import, code at
     git REF vs now, interleaved, each import in a fresh process)
     .venv/bin/python tests/bench/bench_import.py --compare REF   (parsers at git REF vs now,
     interleaved in one run: PDF with the second core idle and busy, EPUB HTML clean-up)
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from common import (
    FIXTURES,
    ROOT,
    WINDOW_CODE,
    base_tree,
    machine,
    median,
    report,
    sixteen_mib_epub,
)

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


def real_book_pdf(path: Path, repeats: int = 60) -> Path:
    """A PDF of real typeset pages: the fixture PDFs with text, repeated (7 pages a round)."""
    import pypdfium2 as pdfium

    sources = [
        pdfium.PdfDocument(str(FIXTURES / "pdf" / name))
        for name in ("pdflatex-4-pages.pdf", "multicolumn.pdf")
    ]
    out = pdfium.PdfDocument.new()
    for _ in range(repeats):
        for src in sources:
            out.import_pages(src)
    out.save(str(path))
    out.close()
    for src in sources:
        src.close()
    return path


MEMORY_WORKER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def children():
    return sum(len((t / "children").read_text().split()) for t in Path(f"/proc/{os.getpid()}/task").iterdir())

lib = Library.open(resolve_paths(sys.argv[2]))
before = rss()
import_book(lib, Path(sys.argv[3]))
after_epub = rss()
import_book(lib, Path(sys.argv[4]))
time.sleep(10)
print(json.dumps({"before": before, "after_epub": after_epub, "children": children(), "after_pdf": rss()}))
"""


WINDOW_MEMORY = """
import asyncio, json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from pathlib import Path
import qasync
from PySide6.QtWidgets import QApplication

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def children():
    return sum(len((t / "children").read_text().split()) for t in Path(f"/proc/{os.getpid()}/task").iterdir())

async def main():
    from core.app import Margin
    from core.paths import resolve_paths
    from desktop.window.main_window import MainWindow
    app = Margin.open(resolve_paths(sys.argv[2]))
    window = MainWindow(app, restore=False)
    window.resize(1280, 860)
    window.show()
    out = {}
    for key, book in (("epub", sys.argv[3]), ("pdf", sys.argv[4])):
        count = len(app.library.list_books())
        window.books.import_files([Path(book)])
        while window.importer.busy or len(app.library.list_books()) == count:
            await asyncio.sleep(0.05)
        await asyncio.sleep(10)
        out[key] = rss()
    out["children"] = children()
    print(json.dumps(out), flush=True)
    os._exit(0)

qapp = QApplication(["bench"])
asyncio.run(main(), loop_factory=lambda: qasync.QEventLoop(qapp))
"""


def memory(ref: str) -> None:
    import json

    print(f"bench_import --memory on {machine()}; {ref} vs now, median of {RUNS} runs each")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old = base_tree(ref, work, WINDOW_CODE)
        epub = sixteen_mib_epub(work)
        pdf = make_text_pdf(
            work / "book117.pdf", book_pages(117, FIXTURES / "books" / "alice_in_wonderland.txt")
        )
        window: dict[str, list[dict[str, float]]] = {"base": [], "now": []}
        for i in range(max(1, RUNS // 2)):
            for name, root in (("base", old), ("now", ROOT)):
                out = subprocess.run(
                    [sys.executable, "-c", WINDOW_MEMORY, str(root), str(work / f"w{name}{i}"),
                     str(epub), str(pdf)],
                    capture_output=True, text=True, check=True, cwd=root,
                )  # fmt: skip
                window[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for key, label in (
            ("epub", "window: RSS 10 s after importing the 16 MiB EPUB"),
            ("pdf", "window: RSS 10 s after then importing a 117-page PDF"),
            ("children", "window: child processes 10 s after the PDF import"),
        ):
            base = median([r[key] for r in window["base"]])
            now = median([r[key] for r in window["now"]])
            ok = now == 0 if key == "children" else now <= 150
            report(label, f"{base:.0f} -> {now:.0f}", "0" if key == "children" else "<= 150 MB", ok)
        figures: dict[str, list[dict[str, float]]] = {"base": [], "now": []}
        for i in range(RUNS):
            for name, root in (("base", old), ("now", ROOT)):
                out = subprocess.run(
                    [sys.executable, "-c", MEMORY_WORKER, str(root), str(work / f"{name}{i}"),
                     str(epub), str(pdf)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                figures[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for key, label in (
            ("after_epub", "RSS after importing a 16 MiB EPUB (MB)"),
            ("after_pdf", "RSS 10 s after a 117-page PDF (MB)"),
            ("children", "child processes 10 s after a PDF import"),
        ):
            base = median([r[key] for r in figures["base"]])
            now = median([r[key] for r in figures["now"]])
            target = "0" if key == "children" else "<= 150 MB"
            ok = now == 0 if key == "children" else now <= 150
            report(label, f"{base:.0f} -> {now:.0f}", target, ok)


def main() -> None:
    if "--memory" in sys.argv:
        at = sys.argv.index("--memory")
        memory(sys.argv[at + 1] if len(sys.argv) > at + 1 else "2ccdf7b")
        return
    if "--compare" in sys.argv:
        compare(sys.argv[sys.argv.index("--compare") + 1])
        return
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
        real420 = real_book_pdf(work / "real420.pdf")

        timed_import(pdf117)  # warm the PDF worker process and the imports
        for label, path, kind in (
            ("generated PDF, 300 pages", pdf300, "pdf"),
            ("generated PDF, 117 pages", pdf117, "pdf"),
            ("real-book PDF (fixtures repeated), 420 pages", real420, "pdf"),
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


def _old_module(ref: str, relpath: str, name: str, folder: Path) -> ModuleType:
    source = subprocess.check_output(["git", "show", f"{ref}:{relpath}"], cwd=ROOT)
    (folder / f"{name}.py").write_bytes(source)
    return importlib.import_module(name)


def _busy_core() -> subprocess.Popen[bytes]:
    """Another program keeping one core busy (ended by the caller)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _interleaved(variants: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: median(values) for name, values in times.items()}


def _with_split_from(module: ModuleType, path: Path, pages: int | None) -> object:
    """parse_pdf with the second worker as shipped (None), or from ``pages`` pages on."""
    saved = module.PARALLEL_FROM_PAGES
    if pages is not None:
        module.PARALLEL_FROM_PAGES = pages
    try:
        return module.parse_pdf(path)
    finally:
        module.PARALLEL_FROM_PAGES = saved


def compare(ref: str) -> None:
    """The parsers at ``ref`` against the working tree, interleaved in one run."""
    from core.books import htmlblocks, pdf
    from core.books.epub import EpubArchive

    print(f"bench_import --compare {ref} on {machine()}; medians of {RUNS} interleaved runs")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sys.path.insert(0, str(work))
        old_pdf = _old_module(ref, "core/books/pdf.py", "old_pdf", work)
        old_html = _old_module(ref, "core/books/htmlblocks.py", "old_htmlblocks", work)
        alice_txt = FIXTURES / "books" / "alice_in_wonderland.txt"
        pdfs = {
            "generated PDF, 600 pages": make_text_pdf(
                work / "gen600.pdf", book_pages(600, alice_txt), title="Six hundred"
            ),
            "real-book PDF, 420 pages": real_book_pdf(work / "real420.pdf"),
            "real-book PDF, 70 pages": real_book_pdf(work / "real70.pdf", repeats=10),
        }
        for busy in (False, True):
            hog = _busy_core() if busy else None
            try:
                for label, path in pdfs.items():
                    variants: dict[str, Callable[[], object]] = {
                        "before": lambda p=path: old_pdf.parse_pdf(p),
                        "after": lambda p=path: _with_split_from(pdf, p, None),
                        "one worker": lambda p=path: _with_split_from(pdf, p, 10**9),
                        "two workers": lambda p=path: _with_split_from(pdf, p, 0),
                    }
                    variants["before"]()  # warm the worker processes
                    variants["two workers"]()
                    med = _interleaved(variants, RUNS)
                    state = "other core busy" if busy else "other core idle"
                    print(
                        f"  {label + ', ' + state:<48} before {med['before'] * 1000:5.0f} ms"
                        f"  after {med['after'] * 1000:5.0f} ms  ×{med['before'] / med['after']:.2f}"
                        f"  (forced: one worker {med['one worker'] * 1000:.0f} ms,"
                        f" two {med['two workers'] * 1000:.0f} ms)"
                    )
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
        old_pdf.shutdown_workers()
        pdf.shutdown_workers()

        # EPUB: the HTML → blocks step on ~16 MiB of chapter XHTML
        text = " ".join(alice_txt.read_text(encoding="utf-8").split())
        body = "".join(f"<p>{text[i : i + 900]}</p>\n  " for i in range(0, 120_000, 900))
        chapters = [(f"Chapter {n + 1}", body) for n in range(140)]
        big = make_epub(work / "big16.epub", chapters, title="Sixteen")
        arc = EpubArchive(big)
        docs = [arc.read(n) for n in arc.entries if n.endswith(".xhtml") and "/c" in n]
        arc.close()
        size = sum(len(d) for d in docs) / 1024 / 1024
        same = all(old_html.html_to_blocks(d) == htmlblocks.html_to_blocks(d) for d in docs[:3])
        med = _interleaved(
            {
                "before": lambda: [old_html.html_to_blocks(d) for d in docs],
                "after": lambda: [htmlblocks.html_to_blocks(d) for d in docs],
            },
            RUNS,
        )
        print(
            f"  {f'EPUB HTML to blocks, {size:.1f} MiB':<48} before {med['before'] * 1000:6.0f} ms"
            f"   after {med['after'] * 1000:6.0f} ms   ×{med['before'] / med['after']:.2f}"
            f"   same blocks: {same}"
        )


if __name__ == "__main__":
    main()
