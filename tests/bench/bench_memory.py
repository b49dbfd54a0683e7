"""The window's resident memory in the states issue 27 names (RSS ≤ 150 MB in each).

Each figure comes from a fresh process running a whole window as a reader starts it, at
1280 × 800; RSS is read from /proc; the median of ``RUNS`` processes is reported:

- a library of 500 real-text books (each 40 paragraphs of *Alice*, imported as the app imports
  them): the window on it, then the shelf scrolled top to bottom (every cover read and
  shown), then a book open;
- a 117-page text PDF (``tests/support/pdfgen``, as bench_import and bench_reader make it)
  open at page 1, then after going through 40 pages;
- the 16 MiB-of-XHTML EPUB of bench_import imported in the window (which opens it), RSS and
  child processes 10 s after the import.

The window processes import nothing of the tests (until 2026-11-25 they imported pytest and
hypothesis through ``common``: about 25 MB that no reader's window holds). They inherit the
suite's in-memory keyring (``PYTHON_KEYRING_BACKEND``, set by tests/conftest.py): keyring is
imported as on a desktop (a Secret Service backend would add secretstorage and cryptography,
about 8 MB), and the machine's own keyring is never read.

Run: .venv/bin/python tests/bench/bench_memory.py             (this tree; --epub: the
     import's state alone, with the child processes 10 s after the book's vectors are done)
     .venv/bin/python tests/bench/bench_memory.py --compare REF   (git REF vs this tree,
     interleaved: one process of each in turn)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 3
BOOKS = 500
SETTLE_S = 10.0  # after an import: the "10 s after"

STATES = (
    ("window", f"window on {BOOKS} books"),
    ("scrolled", "…after scrolling the whole shelf"),
    ("book", "…then with a book open"),
    ("pdf", "a 117-page PDF open"),
    ("pdf_read", "…then 40 pages read"),
    ("epub", f"{SETTLE_S:.0f} s after importing a 16 MiB EPUB"),
)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children() -> int:
    tasks = Path(f"/proc/{os.getpid()}/task")
    return sum(len((t / "children").read_text().split()) for t in tasks.iterdir())


def make_libraries(work: Path, only_epub: bool = False) -> dict[str, Path]:
    """The 500-book library, a library holding the 117-page PDF, and the 16 MiB EPUB."""
    from common import FIXTURES, sixteen_mib_epub

    if only_epub:
        (work / "source").mkdir()
        return {"epub": sixteen_mib_epub(work / "source")}

    from core.books.importer import import_book
    from core.books.pdf import shutdown_workers
    from core.paths import resolve_paths
    from core.search import vector_indexer
    from core.store.library import Library
    from tests.support.pdfgen import book_pages, make_text_pdf

    books = work / "books500"
    library = Library.open(resolve_paths(books).ensure())
    text = (FIXTURES / "books" / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    paragraphs = [p for p in text.split("\n\n") if len(p) > 200]
    source = work / "source"
    source.mkdir()
    for i in range(BOOKS):
        path = source / f"book{i}.txt"
        body = "\n\n".join(paragraphs[(i + k) % len(paragraphs)] for k in range(40))
        path.write_text(f"Book number {i}\n\nCHAPTER I\n\n{body}", encoding="utf-8")
        import_book(library, path)
    library.close()
    pdf_home = work / "pdf117"
    library = Library.open(resolve_paths(pdf_home).ensure())
    alice = FIXTURES / "books" / "alice_in_wonderland.txt"
    pdf = make_text_pdf(source / "book117.pdf", book_pages(117, alice), title="One-seventeen")
    import_book(library, pdf)
    library.close()
    vector_indexer.stop_all_now()
    shutdown_workers()
    return {"books500": books, "pdf117": pdf_home, "epub": sixteen_mib_epub(source)}


def child(root: Path, state: str, target: Path, home: Path) -> None:
    """In a fresh process (code from ``root``): the window, then ``state``; prints figures."""
    sys.path.insert(0, str(root))
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
    from desktop.window.main_window import MainWindow

    assert Path(sys.modules["desktop.window.main_window"].__file__ or "").is_relative_to(root)

    def spin(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.01)

    library = Library.open(resolve_paths(home).ensure())
    main = MainWindow(Margin.of(library), restore=False)
    main.resize(1280, 800)
    main.show()
    spin(3)
    figures: dict[str, float] = {}
    if state == "books500":
        from desktop.library.view import LibraryView

        figures["window"] = rss_mb()
        shelf = main.findChild(LibraryView)
        assert shelf is not None
        bar = shelf.view.verticalScrollBar()
        while bar.value() < bar.maximum():
            bar.setValue(bar.value() + 60)
            spin(0.02)
        spin(2)
        figures["scrolled"] = rss_mb()
        main.open_book(library.list_books()[0].id, 1)
        spin(3)
        figures["book"] = rss_mb()
    elif state == "pdf117":
        main.open_book(library.list_books()[0].id, 1)
        spin(3)
        figures["pdf"] = rss_mb()
        for page in range(2, 41):  # a reader goes through 40 pages
            main.reader.go_to_page(page)
            spin(0.15)
        spin(2)
        figures["pdf_read"] = rss_mb()
    else:
        import resource

        def cpu() -> float:  # the window's own CPU time so far, s
            own = resource.getrusage(resource.RUSAGE_SELF)
            return own.ru_utime + own.ru_stime

        began = time.perf_counter()
        main.books.import_files([target])
        deadline = time.perf_counter() + 120
        while not library.list_books() or main.importer.busy:
            spin(0.05)
            assert time.perf_counter() < deadline, "the import did not finish"
        figures["import_s"] = time.perf_counter() - began
        imported = cpu()
        spin(SETTLE_S)
        figures["epub"] = rss_mb()
        figures["children"] = children()
        # the book's vectors done (the worker may still compute at 10 s), then 10 s more
        from core.search.vector_indexer import indexer_for

        started = time.perf_counter()
        while not indexer_for(library.db).wait(0):
            spin(0.1)
            assert time.perf_counter() - started < 600, "the vectors did not finish"
        figures["vectors_s"] = time.perf_counter() - started + SETTLE_S
        figures["window_cpu_s"] = cpu() - imported  # from the import's end to the vectors'
        spin(SETTLE_S)
        figures["vectors_children"] = children()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)  # the ended ones (all, by now)
        figures["children_cpu_s"] = used.ru_utime + used.ru_stime
        # the work around an import (the window's after it; every child's, part of it during
        # the import), set against the 20 s of CPU two cores give in the 10 s
        figures["after_cpu_s"] = figures["window_cpu_s"] + figures["children_cpu_s"]
    print(json.dumps(figures), flush=True)
    os._exit(0)  # the figures are out; no teardown to wait for


def run(root: Path, state: str, target: Path, home: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(root), state, str(target), str(home)],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    from common import WINDOW_CODE, base_tree, machine, median, report

    ref = sys.argv[sys.argv.index("--compare") + 1] if "--compare" in sys.argv else ""
    only_epub = "--epub" in sys.argv  # the import's state alone (no 500-book library)
    print(f"bench_memory on {machine()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trees = {"now": ROOT}
        if ref:
            trees = {"base": base_tree(ref, work, WINDOW_CODE), "now": ROOT}
        started = time.perf_counter()
        made = make_libraries(work, only_epub)
        print(f"  ({BOOKS} books, a 117-page PDF made in {time.perf_counter() - started:.0f} s)")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(RUNS):
            for name, root in trees.items():  # interleaved: base, now, base, now…
                figures: dict[str, float] = {}
                if not only_epub:
                    figures |= run(root, "books500", made["epub"], made["books500"])
                    figures |= run(root, "pdf117", made["epub"], made["pdf117"])
                figures |= run(root, "epub", made["epub"], work / f"import-{name}-{i}")
                runs[name].append(figures)
    after = (
        ("import_s", "the import itself, s"),
        ("children", "child processes 10 s after the import"),
        ("vectors_s", "its vectors done, s after the import"),
        ("vectors_children", "child processes 10 s after its vectors"),
        ("children_cpu_s", "CPU s of its child processes (parse, vectors…)"),
        ("window_cpu_s", "CPU s of the window, from the import's end to the vectors'"),
        ("after_cpu_s", "CPU s of both (10 s of two cores: 20)"),
    )
    for key, label in (*STATES, *after):
        if key not in runs["now"][0]:
            continue
        values = {name: median([r[key] for r in figures]) for name, figures in runs.items()}
        now = values["now"]
        shown = " -> ".join(f"{v:.0f}" for v in values.values())
        if key.endswith("children"):
            report(label, shown, "0", now == 0)
        elif key in ("vectors_s", "import_s") or key.endswith("cpu_s"):
            shown = " -> ".join(f"{v:.1f}" for v in values.values())
            report(label, f"median {shown} s", "-", True)
        else:
            report(f"RSS, {label}", f"median {shown} MB", "≤ 150 MB", now <= 150)


if __name__ == "__main__":
    if len(sys.argv) > 5 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))
    else:
        main()
