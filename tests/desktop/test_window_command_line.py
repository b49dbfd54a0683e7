"""The window started as a separate process from the command line: a screenshot of a book
(offscreen and under Xvfb), and a bad file that exits 1 with a sentence, not a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_desktop(
    *args: str, platform: str = "offscreen", timeout: int = 90, xvfb: bool = False
) -> Any:
    """``python -m desktop ARGS`` in a new process (its own data folder comes from ARGS)."""
    env = {k: v for k, v in os.environ.items() if k != "MARGIN_HOME"}
    env["QT_QPA_PLATFORM"] = platform
    cmd = [*(["xvfb-run", "-a"] if xvfb else []), sys.executable, "-m", "desktop", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def test_screenshot_command_in_a_subprocess(tmp_path: Path, pdf_dir: Path) -> None:
    png = tmp_path / "shot.png"
    pdf = pdf_dir / "pdflatex-4-pages.pdf"
    done = run_desktop(
        "--data-dir", str(tmp_path / "data"), "--open", str(pdf), "--page", "2",
        "--screenshot", str(png),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert image.width() >= 800 and image.height() >= 500


def test_bad_file_on_the_command_line_exits_1(tmp_path: Path, books_dir: Path) -> None:
    empty = books_dir / "test_empty.epub"
    done = run_desktop(
        "--data-dir", str(tmp_path / "d"), "--open", str(empty),
        "--screenshot", str(tmp_path / "x.png"),
    )  # fmt: skip
    assert done.returncode == 1
    assert "test_empty.epub is empty" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="Xvfb is not installed")
@pytest.mark.parametrize("book", ["books/metamorphosis.epub", "pdf/pdflatex-4-pages.pdf"])
def test_screenshot_under_xvfb(tmp_path: Path, books_dir: Path, book: str) -> None:
    """A PDF too: waiting for its page called processEvents() inside a coroutine, and qasync
    lost the task that waited on the same drawing: the window never closed (the bundle's
    smoke test hung there)."""
    png = tmp_path / "x.png"
    done = run_desktop(
        "--data-dir", str(tmp_path / "data"), "--open", str(books_dir.parent / book),
        "--screenshot", str(png), platform="xcb", timeout=120, xvfb=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000
    log = (tmp_path / "data" / "logs" / "margin.log").read_text(encoding="utf-8")
    assert "Cannot enter into task" not in log
