"""Issue 46 item 10: the hostile comic (pictures of 7,900 × 7,900 pixels, tiny on disk: 187 MB
each decoded; twelve of them took 615 MB) opens within 500 MB, and quitting while a picture
decodes ends the process cleanly (it crashed, 3 of 3: SIGSEGV/SIGBUS). A real process of its
own (its peak memory is its own, and a crash on quit shows as its exit), run by the
benchmark's child (tests/bench/bench_comic_bomb.py, which measures all twelve)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
ROOT = BENCH.parents[1]


def test_the_comic_of_huge_pictures_stays_small_and_quits_cleanly(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from bench_comic_bomb import LIMIT_MB, SIDE, make_bomb_comic
    finally:
        sys.path.remove(str(BENCH))
    comic = make_bomb_comic(tmp_path / "bomb.cbz", pages=2)
    assert comic.stat().st_size < 500_000 and SIDE == 7900
    env = {k: v for k, v in os.environ.items() if k != "MARGIN_HOME"}
    env.update({"PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"})
    child = [str(BENCH / "bench_comic_bomb.py"), "--child", str(comic), str(tmp_path / "home")]
    done = subprocess.run(
        [sys.executable, *child, "1", "quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])  # no crash on quit
    row = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
    assert row["decoding_at_quit"] >= 1  # the window went while a picture decoded
    assert row["peak_mb"] < LIMIT_MB, row
