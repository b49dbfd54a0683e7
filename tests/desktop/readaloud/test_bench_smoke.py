"""The read-aloud benchmark runs (its smoke mode: one short round on Qt's test engine)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_bench_readaloud_smoke(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "bench" / "bench_readaloud.py"), "--smoke"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if "mock · " in line]
    assert len(lines) == 4 and all(line.rstrip().endswith("OK") for line in lines)
