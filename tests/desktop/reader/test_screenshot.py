"""A citation jump photographed on a real X server (Xvfb): the marked words are on screen."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.support.shots import keep_shot

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.xvfb
@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="Xvfb is not installed")
def test_citation_jump_screenshot_shows_the_mark(tmp_path: Path, books_dir: Path) -> None:
    png = tmp_path / "citation.png"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(MARGIN_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="xcb")
    done = subprocess.run(
        [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1280x900x24",
            sys.executable,
            "-m",
            "tests.desktop.reader.citation_shot",
            str(png),
            str(books_dir / "alice_in_wonderland.epub"),
            "39",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    keep_shot(png)
    assert result["page"] == 39 and result["visible"], result
    x, y = result["mark_screen"]
    width, height = result["screen"]
    assert 0 <= x < width and 0 <= y < height, "the mark is inside the screen"
    image = QImage(str(png))
    # the mark colour (orange over the light page): red high, blue low; a few pixels along the
    # line, since the point may fall on a letter's ink (that depends on the book font)
    pixels = [image.pixelColor(x + dx, y) for dx in range(12)]
    assert any(p.red() > 200 and p.blue() < 170 and p.red() - p.blue() > 60 for p in pixels), [
        p.name() for p in pixels
    ]
