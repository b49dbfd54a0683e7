"""First open of a big EPUB in the window, from process spawn to the book shown: Margin's
old code, its new code and calibre's viewer (Debian's ``calibre`` package), interleaved in
one run, each with a fresh library (issue 41: at most 0.7× calibre's time).

Margin is started as ``margin --screenshot PNG BOOK`` (import, open, wait until the page is
drawn, save the picture): the book is shown when the picture appears. Its CPU time (the
process's and its children's, the kernel's count) includes the exit after it.
calibre's viewer has no such option: it converts the book into its cache first
(``calibre-book-manifest.json`` marks the end), then shows it and saves the reading
position (``viewer/annots/*.json`` in its configuration folder): that file appearing is
taken as the book shown (a little after the page is painted: the estimate favours
calibre). The viewer is then ended. Both run offscreen (``QT_QPA_PLATFORM=offscreen``).
Run: .venv/bin/python tests/bench/bench_first_open.py [--rounds N] [--base REF]
Smoke: MARGIN_BENCH_SMOKE=1 (a small EPUB, one round, calibre's side left out).
"""

from __future__ import annotations

import compileall
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, SMOKE, base_tree, machine, median, report, rounds, sixteen_mib_epub

BASE = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else "fede405"
ROUNDS = rounds(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5)
ENTRY = "import sys; from desktop.app import main; sys.exit(main())"  # the `margin` script
LIMIT = 600.0  # seconds one open may take on a loaded machine


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("MARGIN_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    env.update({"QT_QPA_PLATFORM": "offscreen", **extra})
    return env


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def margin_open(tree: Path, book: Path, work: Path) -> tuple[float, float]:
    """(seconds from spawn to the page shown, CPU seconds of the whole process), each time
    with a new library."""
    home = Path(tempfile.mkdtemp(dir=work))
    try:
        return margin_shown(tree, book, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def margin_shown(tree: Path, book: Path, home: Path) -> tuple[float, float]:
    """(seconds from spawn to the page shown, CPU seconds) with the library in ``home``
    (``margin --screenshot``: the picture appears once the page is drawn)."""
    picture = home / "shown.png"
    picture.unlink(missing_ok=True)
    cpu = _children_cpu()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-c", ENTRY, "--data-dir", str(home / "data")),
            *("--screenshot", str(picture), str(book)),
        ],
        cwd=tree,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    shown = 0.0
    while proc.poll() is None and time.perf_counter() - started < LIMIT:
        if not shown and picture.exists():
            shown = time.perf_counter() - started
        time.sleep(0.01)
    proc.wait(timeout=60)
    if not shown and picture.exists():
        shown = time.perf_counter() - started
    assert proc.returncode == 0 and shown, f"margin ({tree}) did not show the book"
    return shown, _children_cpu() - cpu


def calibre_open(book: Path, work: Path) -> tuple[float, float]:
    """(seconds from spawn to the book converted, to the book shown) in calibre's viewer."""
    home = Path(tempfile.mkdtemp(dir=work))
    env = _env(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_CONFIG_HOME=str(home / "config"),
        CALIBRE_CONFIG_DIRECTORY=str(home / "config" / "calibre"),
        QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox",  # these machines run as root
    )
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["ebook-viewer", str(book)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    converted = shown = 0.0
    try:
        while proc.poll() is None and time.perf_counter() - started < LIMIT:
            if not converted and any((home / "cache").rglob("calibre-book-manifest.json")):
                converted = time.perf_counter() - started
            if any((home / "config").rglob("annots/*.json")):
                shown = time.perf_counter() - started
                break
            time.sleep(0.02)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(home, ignore_errors=True)
    assert shown, "calibre's viewer did not show the book"
    return converted, shown


def main() -> None:
    calibre = not SMOKE and shutil.which("ebook-viewer") is not None
    print(f"bench_first_open on {machine()}; old = {BASE}; {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if SMOKE:
            from tests.core.books.epubgen import make_epub

            book = make_epub(
                work / "small.epub", [(f"Chapter {n}", "<p>Words.</p>" * 50) for n in range(3)]
            )
        else:
            book = sixteen_mib_epub(work)
        size = book.stat().st_size / 2**20
        old = base_tree(BASE, work, ("core", "desktop", "prompts", "resources"))
        for tree in (old, ROOT):
            for part in ("core", "desktop"):
                compileall.compile_dir(str(tree / part), quiet=1)
        rows: dict[str, list[tuple[float, float]]] = {"old": [], "new": [], "calibre": []}
        margin_open(ROOT, book, work)  # warm-up: the OS page cache
        for _ in range(ROUNDS):
            rows["old"].append(margin_open(old, book, work))
            rows["new"].append(margin_open(ROOT, book, work))
            if calibre:
                rows["calibre"].append(calibre_open(book, work))
    for side in ("old", "new"):
        shown = median([r[0] for r in rows[side]])
        cpu = median([r[1] for r in rows[side]])
        report(
            f"{side}: spawn → book shown ({size:.1f} MiB EPUB)",
            f"{shown:.2f} s, {cpu:.2f} s CPU",
            "-",
            True,
        )
    new = median([r[0] for r in rows["new"]])
    report("new ÷ old (shown)", f"{new / median([r[0] for r in rows['old']]):.2f}×", "< 1", True)
    if rows["calibre"]:
        converted = median([r[0] for r in rows["calibre"]])
        shown = median([r[1] for r in rows["calibre"]])
        report(
            "calibre's viewer: converted / shown", f"{converted:.2f} s / {shown:.2f} s", "-", True
        )
        ratios = [n[0] / c[1] for n, c in zip(rows["new"], rows["calibre"], strict=True)]
        report(
            "new ÷ calibre (pair by pair, median)",
            f"{median(ratios):.2f}×",
            "<= 0.7×",
            median(ratios) <= 0.7,
        )


if __name__ == "__main__":
    main()
