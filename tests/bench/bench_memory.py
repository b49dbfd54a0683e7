"""The window's resident memory with a library of 500 books (issue 27: RSS ≤ 150 MB).

A library of 500 real-text books (each 40 paragraphs of *Alice*, imported as the app imports
them) is made once; then fresh processes, each a whole window as a reader starts it, open it
at 1280 × 800, scroll the shelf from top to bottom (every cover read and shown), then open a
book. RSS is read from /proc after each step; the median of ``RUNS`` processes is reported.
Run: .venv/bin/python tests/bench/bench_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import FIXTURES, ROOT, machine, median, report

RUNS = 3
BOOKS = 500


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_library(home: Path) -> None:
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.search import vectors
    from core.store.library import Library

    library = Library.open(resolve_paths(home).ensure())
    text = (FIXTURES / "books" / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    paragraphs = [p for p in text.split("\n\n") if len(p) > 200]
    source = home / "source"
    source.mkdir()
    for i in range(BOOKS):
        path = source / f"book{i}.txt"
        body = "\n\n".join(paragraphs[(i + k) % len(paragraphs)] for k in range(40))
        path.write_text(f"Book number {i}\n\nCHAPTER I\n\n{body}", encoding="utf-8")
        import_book(library, path)
    vectors.stop_all_now()
    library.close()


def window(home: Path) -> None:
    """In a fresh process: the window on the library, the shelf scrolled, then a book open."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import asyncio

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app, already_running=True)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    from core.app import Margin
    from core.paths import resolve_paths
    from core.store.library import Library
    from desktop.library_view import LibraryView
    from desktop.main_window import MainWindow

    def spin(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.01)

    library = Library.open(resolve_paths(home))
    main = MainWindow(Margin.of(library), restore=False)
    main.resize(1280, 800)
    main.show()
    spin(3)
    figures = {"window": rss_mb()}
    shelf = main.findChild(LibraryView)
    assert shelf is not None
    bar = shelf.view.verticalScrollBar()
    while bar.value() < bar.maximum():
        bar.setValue(bar.value() + 60)
        spin(0.02)
    spin(2)
    figures["scrolled"] = rss_mb()
    first = library.list_books()[0].id
    main.open_book(first, 1)
    spin(2)
    figures["book"] = rss_mb()
    print(json.dumps(figures))
    os._exit(0)  # the figures are out; no teardown to wait for


def main() -> None:
    print(f"bench_memory on {machine()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        started = time.perf_counter()
        make_library(home)
        print(f"  ({BOOKS} books imported in {time.perf_counter() - started:.0f} s)")
        runs = []
        for _ in range(RUNS):
            out = subprocess.run(
                [sys.executable, __file__, "--window", str(home)],
                capture_output=True, text=True, check=True, cwd=ROOT,
            )  # fmt: skip
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for key, name in (
        ("window", f"RSS, window on {BOOKS} books"),
        ("scrolled", "…after scrolling the whole shelf"),
        ("book", "…then with a book open"),
    ):
        value = median([r[key] for r in runs])
        report(name, f"median {value:.0f} MB", "≤ 150 MB", value <= 150)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--window":
        window(Path(sys.argv[2]))
    else:
        main()
