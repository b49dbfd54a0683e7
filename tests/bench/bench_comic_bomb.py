"""The hostile comic of issue 46 item 10: a 2.4 MB CBZ of twelve 7,900 × 7,900 pictures (PNG of
one colour each: tiny on disk, 187 MB each decoded). Measures the peak memory of the window's
process while it imports the comic, opens it and pages through every picture, then quits
while a picture is decoding (that crashed, 3 of 3: SIGSEGV/SIGBUS), and says how it ended.

"before" is the same code with the decoding budget off (``image_pages.BIG_PIXELS`` and
``DECODE_PIXELS`` unlimited: every picture decoded at once, as before issue 46); "after" is
the code as it is. Each run is a fresh process (its peak is its own); the two are
interleaved and the figures are medians. Target (issue 46): under 500 MB, no crash on quit.
Run: QT_QPA_PLATFORM=offscreen nice .venv/bin/python tests/bench/bench_comic_bomb.py [--runs 3]
Smoke (MARGIN_BENCH_SMOKE=1): three pictures, one run of "after".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, SMOKE, machine, median, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
SIDE = 7900
PAGES = 12
LIMIT_MB = 500


def make_bomb_comic(path: Path, pages: int = PAGES, side: int = SIDE) -> Path:
    """``pages`` PNG pictures of ``side``² pixels, each of one colour (~190 KB each)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.comics import page_colour, png

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        made: dict[int, bytes] = {}
        for n in range(pages):
            colour = n % 5
            if colour not in made:
                made[colour] = png(side, side, page_colour(colour))
            zf.writestr(f"comic/page{n + 1:02}.png", made[colour])
    return path


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def one_run(comic: Path, home: Path, budget: bool, quick: bool) -> dict[str, float]:
    """Import, open, page through (``quick``: only to the second picture), then quit while a
    picture decodes."""
    from PySide6.QtWidgets import QApplication

    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from desktop.reader import image_pages
    from desktop.reader.image_pages import ImagePagesView
    from desktop.window.main_window import MainWindow

    if not budget:  # before issue 46: every picture decoded whole, all at once
        image_pages.BIG_PIXELS = image_pages.DECODE_PIXELS = 10**12
    margin = Margin.open(resolve_paths(home))
    window = MainWindow(margin, restore=False)
    window.resize(1280, 860)
    window.show()
    QApplication.processEvents()
    started = time.perf_counter()
    book = import_book(margin.library, comic).book
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, ImagePagesView)
    while not view.is_drawn():
        await asyncio.sleep(0.005)
    first = time.perf_counter() - started
    opened_peak = peak_mb()
    if quick:
        view.next_page()  # the next picture decodes…
    else:
        for _ in range(view.page_count - 1):
            view.next_page()
            while not view.is_drawn():
                await asyncio.sleep(0.005)
        view.go_to_page(1)  # far back: its picture left the cache, and decodes again…
    paged = time.perf_counter() - started
    await asyncio.sleep(0.05)
    busy = view.pool.activeThreadCount()
    window.close()  # …while the window goes
    await window.shutdown()
    margin.close()
    return {
        "first_page_s": first,
        "all_pages_s": paged,
        "open_peak_mb": opened_peak,
        "peak_mb": peak_mb(),
        "decoding_at_quit": float(busy),
    }


def child(comic: str, home: str, budget: bool, quick: bool = False) -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        result = runner.run(one_run(Path(comic), Path(home), budget, quick))
    print(json.dumps(result), flush=True)
    app.quit()
    # a normal exit: Qt's and Python's teardown run (a decode still running crashed here)


def run_child(comic: Path, home: Path, budget: bool) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(comic), str(home), "1" if budget else "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=900,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        print(proc.stderr[-3000:])
        raise SystemExit(f"a run failed (exit {proc.returncode})")
    row = json.loads(lines[-1])
    row["exit"] = float(proc.returncode)
    return row


def ending(code: float) -> str:
    if code < 0:
        return f"crashed ({signal.Signals(int(-code)).name})"
    return "clean exit" if code == 0 else f"exit {int(code)}"


def main() -> None:
    if (
        len(sys.argv) >= 5 and sys.argv[1] == "--child"
    ):  # (tests/desktop/reader/test_comics_budget.py)
        child(sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:] == ["quick"])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    pages = 3 if SMOKE else PAGES
    modes = (True,) if SMOKE else (False, True)
    runs = 1 if SMOKE else args.runs
    print(f"bench_comic_bomb on {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        comic = make_bomb_comic(Path(tmp) / "bomb.cbz", pages)
        print(f"  comic: {pages} PNG pictures {SIDE}², {comic.stat().st_size / 1e6:.1f} MB")
        rows: dict[bool, list[dict[str, float]]] = {m: [] for m in modes}
        for run in range(runs):
            for budget in modes:  # interleaved
                home = Path(tmp) / f"home{run}{int(budget)}"
                rows[budget].append(run_child(comic, home, budget))
    for budget in modes:
        name = "after (budget)" if budget else "before (no budget)"
        got = rows[budget]
        peak = median([r["peak_mb"] for r in got])
        exits = ", ".join(ending(r["exit"]) for r in got)
        report(
            f"{name}: first page / all {pages} pages",
            f"{median([r['first_page_s'] for r in got]):.1f} / "
            f"{median([r['all_pages_s'] for r in got]):.1f} s",
            "",
            True,
        )
        report(
            f"{name}: peak RSS opening (paging)",
            f"{median([r['open_peak_mb'] for r in got]):.0f} MB ({peak:.0f} MB)",
            f"< {LIMIT_MB} MB",
            peak < LIMIT_MB or not budget,
        )
        decoding = median([r["decoding_at_quit"] for r in got])
        report(
            f"{name}: quit with {decoding:.0f} decoding",
            exits,
            "clean exit",
            all(r["exit"] == 0 for r in got) or not budget,
        )
    after = rows[True]
    if any(r["exit"] != 0 for r in after) or max(r["peak_mb"] for r in after) >= LIMIT_MB:
        raise SystemExit("the comic took too much memory, or quitting crashed")


if __name__ == "__main__":
    main()
