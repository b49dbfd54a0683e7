"""The log file: every record reaches it, from the first; it rotates without
``logging.handlers`` (kept off the window's start-up path)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.log import LOG_NAME, QuietFileHandler, setup_logging
from core.paths import resolve_paths

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_records_reach_the_file_at_once(tmp_path: Path) -> None:
    paths = resolve_paths(str(tmp_path / "home"))
    handler = setup_logging(paths)
    try:
        logging.getLogger("margin.test").warning("the very first record")
        # no flush, no close: a start-up that dies next must have written it already
        text = (paths.logs / LOG_NAME).read_text(encoding="utf-8")
        assert "WARNING margin.test [MainThread] the very first record" in text
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


def test_the_file_rotates_and_keeps_five_older_ones(tmp_path: Path) -> None:
    tmp_path = tmp_path / "logs"
    tmp_path.mkdir()
    path = tmp_path / LOG_NAME
    handler = QuietFileHandler(path, max_bytes=200, backups=5)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("margin.test.rotation")
    log.propagate = False
    log.addHandler(handler)
    try:
        for n in range(40):
            log.warning("record %02d %s", n, "x" * 60)
    finally:
        log.removeHandler(handler)
        handler.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [LOG_NAME] + [f"{LOG_NAME}.{n}" for n in range(1, 6)]
    assert all(p.stat().st_size < 300 for p in tmp_path.iterdir())
    # nothing lost between the files: the newest records, in order, across them
    kept = "".join(
        (tmp_path / name).read_text(encoding="utf-8")
        for name in [f"{LOG_NAME}.{n}" for n in range(5, 0, -1)] + [LOG_NAME]
    )
    numbers = [int(line.split()[1]) for line in kept.splitlines()]
    assert numbers == list(range(numbers[0], 40))


def test_a_log_folder_gone_drops_records_quietly(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    handler = QuietFileHandler(folder / LOG_NAME, max_bytes=50, backups=2)
    log = logging.getLogger("margin.test.gone")
    log.propagate = False
    log.addHandler(handler)
    try:
        log.warning("written")
        for file in folder.iterdir():
            file.unlink()
        folder.rmdir()
        for _ in range(3):  # the roll-over fails, then reopening does: no traceback
            log.warning("%s", "x" * 60)
    finally:
        log.removeHandler(handler)
        handler.close()
    assert capsys.readouterr().err == ""


def test_logging_does_not_import_logging_handlers() -> None:
    code = "import sys, core.log; print('logging.handlers' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr
