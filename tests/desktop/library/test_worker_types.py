"""Cover workers never make a PySide6 type themselves (two threads making types at once
crashed a start: 3 in 150 under load, a worker making QGradient's enums while the window
painted its shelf)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_cover_and_page_workers_make_no_type_of_their_own(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.desktop.library.worker_types_probe",
            str(root / "tests" / "fixtures"),
            str(tmp_path),
        ],
        cwd=root,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # every kind of cover was made on the worker (txt, epub x2, pdf, comic) and a page decoded
    assert report["sizes"] == [[180, 270]] * 5 + [[20, 30]]
    assert len(list(tmp_path.glob("covers/*.png"))) == 5
    assert report["warnings"] == []  # each kind of cover work ran on the window's thread
    assert report["made"] == []  # the window's thread made every type the worker used
