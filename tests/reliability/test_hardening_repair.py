"""A damaged search index (or damaged stored text) is repaired in place: nothing the reader
made is lost, and no message advises discarding the database while it still opens
(issue 27, item 2)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from core.cli import main
from core.paths import resolve_paths

FORBIDDEN = ("recover-library", "move it away", "delete", "remove")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _database() -> Path:
    return resolve_paths(None).database


def _scramble_index_blocks() -> None:
    """Random bytes in the FTS5 index's segment blocks only (not its structure record)."""
    rnd = random.Random(1)
    with sqlite3.connect(_database()) as c:
        for rid, block in c.execute("SELECT id, block FROM chunk_index_data").fetchall():
            if rid <= 10 or len(block) <= 20:
                continue
            data = bytearray(block)
            # one byte in eight: an index without positions (issue 41) holds no position lists
            # whose decoding would catch 20 bytes scrambled in a block
            for _ in range(len(data) // 8):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
            c.execute("UPDATE chunk_index_data SET block = ? WHERE id = ?", (bytes(data), rid))


@pytest.fixture
def library(capsys: pytest.CaptureFixture[str], books_dir: Path) -> None:
    code, _, err = _run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    assert code == 0, err
    code, _, err = _run(capsys, "notes", "1", "--add", "my precious note")
    assert code == 0, err


def test_a_damaged_index_is_repaired_with_notes_kept(
    capsys: pytest.CaptureFixture[str], library: None
) -> None:
    _scramble_index_blocks()
    code, _, err = _run(capsys, "search", "1", "rabbit")
    assert code == 1
    assert "margin repair" in err and "notes, highlights and conversations are kept" in err
    assert not any(word in err for word in FORBIDDEN), err

    code, out, err = _run(capsys, "repair", "--all")
    assert code == 0, err
    assert "was damaged and has been rebuilt" in out

    code, out, err = _run(capsys, "search", "1", "rabbit", "--beyond-read")
    assert code == 0, err
    assert "Rabbit" in out
    code, out, _ = _run(capsys, "notes", "1")
    assert "my precious note" in out
    with sqlite3.connect(_database()) as c:  # FTS5's own check agrees
        c.execute("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")


def test_damaged_stored_text_is_read_again_by_repair(
    capsys: pytest.CaptureFixture[str], library: None
) -> None:
    with sqlite3.connect(_database()) as c:
        c.execute("UPDATE page SET text = x'00112233' WHERE book_id = 1 AND number = 5")
    code, _, err = _run(capsys, "page", "1", "5")
    assert code == 1 and "margin repair 1" in err
    assert not any(word in err for word in FORBIDDEN), err

    code, out, err = _run(capsys, "repair", "1")
    assert code == 0, err
    assert "read again from the copy" in out
    code, out, err = _run(capsys, "page", "1", "5")
    assert code == 0 and out.strip(), err
    code, out, _ = _run(capsys, "notes", "1")
    assert "my precious note" in out


def test_repair_needs_a_book_or_all(capsys: pytest.CaptureFixture[str], library: None) -> None:
    code, _, err = _run(capsys, "repair")
    assert code == 2 and "--all" in err


def test_an_unreadable_file_still_gets_the_backup_advice(tmp_path: Path) -> None:
    from core.store.db import explain

    err = explain(sqlite3.DatabaseError("file is not a database"))
    assert err is not None and "backup" in (err.hint or "")


def _damage_bookkeeping(which: str) -> None:
    """Damage the FTS5 index's own bookkeeping: its structure record (``_data`` id 10), its
    averages record (id 1) or its config/version row."""
    with sqlite3.connect(_database()) as c:
        if which == "structure":
            c.execute("UPDATE chunk_index_data SET block = ? WHERE id = 10", (b"\xff" * 9,))
        elif which == "averages":
            c.execute("UPDATE chunk_index_data SET block = ? WHERE id = 1", (b"\xff\xfe",))
        elif which == "version":
            c.execute("UPDATE chunk_index_config SET v = 99 WHERE k = 'version'")
        else:
            c.execute("DELETE FROM chunk_index_config")


@pytest.mark.parametrize("which", ["structure", "averages", "version", "config gone"])
def test_damaged_index_bookkeeping_is_repaired(
    capsys: pytest.CaptureFixture[str], library: None, which: str
) -> None:
    """Issue 46 item 6: damage in the index's own bookkeeping rows made search say it "went
    wrong" and `margin repair` crash (exit 70) while telling the reader to run it."""
    _damage_bookkeeping(which)
    code, _, err = _run(capsys, "search", "1", "rabbit", "--beyond-read")
    assert code in (0, 1), err  # found nothing wrong, or said what to do
    if code == 1:
        assert "margin repair" in err and "went wrong" not in err, err
    code, out, err = _run(capsys, "repair", "--all")
    assert code == 0, err
    assert "Traceback" not in err
    code, out, err = _run(capsys, "search", "1", "rabbit", "--beyond-read")
    assert code == 0, err
    assert "Rabbit" in out
    code, out, _ = _run(capsys, "notes", "1")
    assert "my precious note" in out
    with sqlite3.connect(_database()) as c:  # FTS5's own check agrees
        c.execute("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
