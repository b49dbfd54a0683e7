"""The window: start-up time, PDF page turns, main-thread stalls during an import, memory.

Targets (issue 4): window visible ≤ 1.0 s after launch; a PDF page turn painted ≤ 50 ms;
main-thread stalls ≤ 50 ms while a 117-page PDF imports; RSS ≤ 300 MB with it open.
Issue 14: a theme switch and a change of the book's look (Reading settings) with an EPUB open
at 1280×800, painted; both rebuild the page's few loaded stored pages.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_window.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import FIXTURES, ROOT, Heartbeat, machine, median, percentile, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def startup_ms(runs: int = 5) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "MARGIN_STARTUP_TIMING": "1"}
            env.pop("MARGIN_HOME", None)
            start = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "desktop", "--data-dir", home, "--exit-after-shown"],
                cwd=ROOT,
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert proc.stderr is not None
            for line in proc.stderr:
                if "window shown after" in line:
                    times.append((time.perf_counter() - start) * 1000)
                    break
            proc.wait(timeout=30)
    return times


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def in_window(app: object) -> None:
    from PySide6.QtWidgets import QApplication

    from core.app import Margin
    from core.paths import resolve_paths
    from desktop.reader.pdf_view import PdfView
    from desktop.window.main_window import MainWindow
    from tests.support.pdfgen import book_pages, make_text_pdf

    with tempfile.TemporaryDirectory() as home:
        pdf = make_text_pdf(
            Path(home) / "book117.pdf",
            book_pages(117, FIXTURES / "books" / "alice_in_wonderland.txt"),
            title="One hundred seventeen",
        )
        app = Margin.open(resolve_paths(Path(home) / "data"))
        library = app.library
        window = MainWindow(app, restore=False)
        window.resize(1280, 860)
        window.show()
        QApplication.processEvents()
        # main-thread stalls while the 117-page PDF imports (10 ms heartbeat)
        heart = Heartbeat(10)
        heart.start()
        await asyncio.sleep(0.2)
        heart.reset()
        started = time.perf_counter()
        window.books.import_files([pdf])
        while window.importer.busy or not library.list_books():
            await asyncio.sleep(0.005)
        import_ms = (time.perf_counter() - started) * 1000
        await asyncio.sleep(0.1)
        heart.stop()
        gaps = heart.gaps
        stall = max(gaps) - 10
        report(
            "import 117-page PDF from the window",
            f"{import_ms:.0f} ms",
            "(off the UI thread)",
            True,
        )
        report(
            "main-thread stall during import (max)",
            f"{stall:.1f} ms (p99 {percentile(gaps, 99) - 10:.1f})",
            "≤ 50 ms",
            stall <= 50,
        )
        # page turns
        while window.reader.book is None:
            await asyncio.sleep(0.01)
        view = window.reader.view
        assert isinstance(view, PdfView)
        await window.reader.wait_drawn(10)
        turns = []
        for page in range(2, 42):
            start = time.perf_counter()
            window.reader.go_to_page(page)
            while not view.is_drawn():
                QApplication.processEvents()
                await asyncio.sleep(0)
            turns.append((time.perf_counter() - start) * 1000)
        report(
            "PDF page turn to painted page",
            f"median {median(turns):.1f} ms, p95 {percentile(turns, 95):.1f} ms",
            "≤ 50 ms",
            percentile(turns, 95) <= 50,
        )
        jumps = []
        for page in (100, 60, 115, 80, 50, 110, 70, 90, 55, 105):  # far pages: nothing cached
            start = time.perf_counter()
            window.reader.go_to_page(page)
            while not view.is_drawn():
                QApplication.processEvents()
                await asyncio.sleep(0)
            jumps.append((time.perf_counter() - start) * 1000)
        report(
            "PDF jump to an unrendered page, painted",
            f"median {median(jumps):.1f} ms, p95 {percentile(jumps, 95):.1f} ms",
            "≤ 50 ms",
            percentile(jumps, 95) <= 50,
        )
        rss = rss_mb()
        report("RSS with the 117-page PDF open", f"{rss:.0f} MB", "≤ 300 MB", rss <= 300)
        window.close()
        await window.shutdown()
        library.close()


async def look_changes(app: object) -> None:
    from dataclasses import replace

    from PySide6.QtWidgets import QApplication

    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from desktop.reader.typography import Typography
    from desktop.window.main_window import MainWindow

    with tempfile.TemporaryDirectory() as home:
        margin = Margin.open(resolve_paths(Path(home) / "data"))
        book = import_book(margin.library, FIXTURES / "books" / "alice_in_wonderland.epub").book
        window = MainWindow(margin, restore=False)
        window.resize(1280, 800)
        window.show()
        window.open_book(book.id, 9)
        for _ in range(10):
            QApplication.processEvents()
            await asyncio.sleep(0.01)

        def painted(change: object) -> float:
            start = time.perf_counter()
            change()  # type: ignore[operator]
            window.repaint()  # the whole window drawn, not just scheduled
            QApplication.processEvents()
            return (time.perf_counter() - start) * 1000

        themes = ["sepia", "dark", "light"] * 5
        switch = [painted(lambda t=t: window.set_theme(t)) for t in themes]
        report(
            "theme switch with an EPUB open, painted",
            f"median {median(switch):.1f} ms, p95 {percentile(switch, 95):.1f} ms",
            "≤ 100 ms",
            percentile(switch, 95) <= 100,
        )
        looks = [
            replace(Typography(), measure=m, line_spacing=s)
            for m, s in [(50, 1.2), (70, 1.6), (66, 1.5)] * 5
        ]
        look = [painted(lambda t=t: window.panels.apply_typography(t)) for t in looks]
        report(
            "reading settings change (measure, spacing), painted",
            f"median {median(look):.1f} ms, p95 {percentile(look, 95):.1f} ms",
            "≤ 100 ms",
            percentile(look, 95) <= 100,
        )
        window.close()
        await window.shutdown()
        margin.close()


def main() -> None:
    print(f"bench_window on {machine()}")
    times = startup_ms()
    report(
        "launch to visible window (median of 5)",
        f"{median(times):.0f} ms",
        "≤ 1000 ms",
        median(times) <= 1000,
    )
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(in_window(app))
        runner.run(look_changes(app))


if __name__ == "__main__":
    main()
