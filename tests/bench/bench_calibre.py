"""Opening a calibre library of 500 books in Margin — issue 42's goal: ≤ 1 s.

Builds a real calibre library with Debian's ``calibredb add`` (N short text books, with
series and tags on some), imports it once into a fresh Margin data folder (each book read in
place), then times, interleaved in each round:

* ``open``: what Margin does when it opens the library again — ``refresh`` after calibre
  changed it (one book's metadata set with calibredb between rounds): metadata.db read whole,
  compared with Margin's books, the changed one updated;
* ``check``: ``refresh`` when nothing changed (two stats of metadata.db);
* ``read``: reading metadata.db alone (``CalibreLibrary.books``);
* ``calibredb list``: calibre's own listing of the same library, for scale (its start-up
  included).

    .venv/bin/python tests/bench/bench_calibre.py [--books 500] [--rounds 5] [--smoke]

``--smoke`` (20 books, 1 round) is what the suite runs. Skips with a reason without calibre.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.common import machine, median, report  # noqa: E402

WORDS = ROOT / "tests" / "fixtures" / "books" / "metamorphosis.txt"


def make(folder: Path, count: int) -> None:
    text = WORDS.read_text(encoding="utf-8").split()
    src = folder.parent / "src"
    src.mkdir()
    for i in range(count):
        start = (i * 977) % (len(text) - 600)
        body = " ".join(text[start : start + 600])
        (src / f"Book {i:04d}.txt").write_text(f"Book {i}\n\n{body}\n", encoding="utf-8")
    subprocess.run(
        [
            "calibredb",
            "add",
            "--duplicates",
            "--library-path",
            str(folder),
            *sorted(map(str, src.iterdir())),
        ],
        check=True,
        capture_output=True,
        timeout=3600,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--books", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    count, rounds = (20, 1) if args.smoke else (args.books, args.rounds)
    if shutil.which("calibredb") is None:
        print("skipped: calibre is not installed (Debian package 'calibre')")
        return 0
    from core.paths import Paths
    from core.sources.calibre import CalibreLibrary
    from core.sources.calibre_import import refresh
    from core.store.library import Library

    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "Calibre Library"
        t0 = time.perf_counter()
        make(folder, count)
        made = time.perf_counter() - t0
        lib = Library.open(Paths(Path(tmp) / "margin", Path(tmp) / "margin").ensure())
        try:
            t0 = time.perf_counter()
            first = refresh(lib, folder)
            imported = time.perf_counter() - t0
            assert first.added == count, first
            print(
                f"  made with calibredb in {made:.1f} s; first import (read in place) "
                f"{imported:.1f} s, {imported / count * 1000:.0f} ms a book"
            )
            ids = [b.id for b in CalibreLibrary(folder).books()]
            times: dict[str, list[float]] = {"open": [], "check": [], "read": [], "list": []}
            for r in range(rounds):
                subprocess.run(
                    [
                        "calibredb",
                        "set_metadata",
                        str(ids[r % len(ids)]),
                        "--field",
                        f"tags:round{r}",
                        "--library-path",
                        str(folder),
                    ],
                    check=True,
                    capture_output=True,
                )
                t0 = time.perf_counter()
                done = refresh(lib, folder)
                times["open"].append(time.perf_counter() - t0)
                assert done.updated == 1 and done.added == 0, done
                t0 = time.perf_counter()
                refresh(lib, folder)
                times["check"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                assert len(CalibreLibrary(folder).books()) == count
                times["read"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                subprocess.run(
                    [
                        "calibredb",
                        "list",
                        "--fields",
                        "title,authors,series,tags",
                        "--library-path",
                        str(folder),
                    ],
                    check=True,
                    capture_output=True,
                )
                times["list"].append(time.perf_counter() - t0)
        finally:
            lib.close()
    for key, label, goal in (
        ("open", f"open a calibre library of {count} books", 1.0),
        ("check", "check for changes (none)", 0.05),
        ("read", f"read metadata.db of {count} books", 1.0),
        ("list", "calibredb list (calibre's own, for scale)", 99.0),
    ):
        value = median(times[key])
        report(label, f"{value * 1000:.1f} ms", f"≤ {goal:g} s", value <= goal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
