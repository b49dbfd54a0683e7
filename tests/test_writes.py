"""No test writes outside its temp folders: the guard in tests/support/writes.py refuses it
(and fails the test), screenshots go only where MARGIN_SHOTS says, and no test names a fixed
folder of this machine."""

from __future__ import annotations

import re
import sqlite3
import tempfile
from pathlib import Path

import pytest
from PySide6.QtGui import QImage  # loaded before the guard starts, as in the window tests

from tests.support.shots import keep_shot, save_shot, shots_folder
from tests.support.writes import GUARD, OutsideTmpError

ROOT = Path(__file__).resolve().parent.parent
STRAY = ROOT / "written-by-a-test.txt"


@pytest.fixture
def refused() -> list[str]:
    """What the guard refused during the test; cleared so the refusals made on purpose here do
    not fail the test."""
    seen: list[str] = []
    yield seen
    seen.extend(GUARD.outside)
    GUARD.outside.clear()


def test_a_file_written_outside_tmp_is_refused_and_not_written(refused: list[str]) -> None:
    try:
        with pytest.raises(OutsideTmpError, match=re.escape(STRAY.name)):
            STRAY.write_text("left behind")
        assert not STRAY.exists()
        with pytest.raises(OutsideTmpError, match="new database"):
            sqlite3.connect(ROOT / "stray.sqlite3")
        assert not (ROOT / "stray.sqlite3").exists()
        with pytest.raises(OutsideTmpError, match="mkdir"):
            (ROOT / "stray-folder").mkdir()
        assert len(GUARD.outside) == 3, "remembered even when the error is caught"
    finally:  # the guard failed: leave nothing in the project
        STRAY.unlink(missing_ok=True)
        (ROOT / "stray.sqlite3").unlink(missing_ok=True)
        if (ROOT / "stray-folder").is_dir():
            (ROOT / "stray-folder").rmdir()


def test_reading_outside_tmp_and_writing_inside_are_allowed(tmp_path: Path) -> None:
    assert (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "note.txt").write_text("kept", encoding="utf-8")
    sqlite3.connect(tmp_path / "db.sqlite3").close()
    with tempfile.NamedTemporaryFile(suffix=".txt") as temp:  # O_TMPFILE on the folder itself
        temp.write(b"kept")
    assert GUARD.outside == []


def test_a_picture_saved_outside_tmp_is_refused(qapp: object, refused: list[str]) -> None:
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    try:
        with pytest.raises(OutsideTmpError, match="save picture"):
            image.save(str(ROOT / "stray.png"))
        assert not (ROOT / "stray.png").exists()
    finally:
        (ROOT / "stray.png").unlink(missing_ok=True)


def test_screenshots_are_saved_only_when_margin_shots_names_a_folder(
    qapp: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    monkeypatch.delenv("MARGIN_SHOTS", raising=False)
    assert shots_folder() is None and save_shot(image, "x.png") is None
    drawn = tmp_path / "drawn.png"
    assert image.save(str(drawn))
    assert keep_shot(drawn) is None
    monkeypatch.setenv("MARGIN_SHOTS", str(tmp_path / "shots"))
    saved = save_shot(image, "x.png")
    assert saved == tmp_path / "shots" / "x.png" and not QImage(str(saved)).isNull()
    assert keep_shot(drawn) == tmp_path / "shots" / "drawn.png"


# a folder of this machine (the shared checkout, its worktrees, a screenshots folder)
FIXED = re.compile(r"""["'](/work/|[^"']*\bshots/)""")
# no exception: the fixtures live in tests/fixtures
READ_ONLY: set[tuple[str, str]] = set()


def test_no_test_names_a_fixed_folder_of_this_machine() -> None:
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if not (path.name.startswith("test_") or path.name in ("conftest.py",)):
            continue
        if "support" in path.parts or path.name == Path(__file__).name:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = FIXED.search(line)
            if match and not any(path.name == name and text in line for name, text in READ_ONLY):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "use tmp_path, or tests/support/shots.py for screenshots:\n" + "\n".join(
        found
    )
