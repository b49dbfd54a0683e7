"""A moved data folder keeps working, and an old one left behind is never read (issue 27,
item 3): book copies are stored relative to the data folder."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import peewee as pw

from core.store import migrations
from tests.reliability.clirun import run


def _library(tmp_path: Path, books_dir: Path) -> Path:
    old = tmp_path / "old-machine" / "Margin"
    assert run(old, "import", str(books_dir / "alice_in_wonderland.epub")).returncode == 0
    assert run(old, "notes", "1", "--add", "kept").returncode == 0
    return old


def test_a_moved_folder_keeps_reimport_and_delete_working(tmp_path: Path, books_dir: Path) -> None:
    old = _library(tmp_path, books_dir)
    new = tmp_path / "new-machine" / "Margin"
    new.parent.mkdir()
    shutil.move(old, new)
    done = run(new, "reimport", "1")
    assert done.returncode == 0, done.stderr
    assert "kept" in run(new, "notes", "1").stdout
    copies = list((new / "books").iterdir())
    assert len(copies) == 1
    done = run(new, "delete", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert not copies[0].exists(), "the copy in the moved folder is deleted with its book"
    listing = run(new, "books")
    assert "was the database lost" not in listing.stderr


def test_an_old_folder_left_behind_is_never_read(tmp_path: Path, books_dir: Path) -> None:
    old = _library(tmp_path, books_dir)
    new = tmp_path / "synced" / "Margin"
    shutil.copytree(old, new)
    for copy in (new / "books").iterdir():
        copy.unlink()  # the new folder lost its copy; the old one still has it
    done = run(new, "reimport", "1")
    assert done.returncode == 1 and "missing" in done.stderr
    shown = run(new, "show", "1", "--json")
    assert str(old) not in shown.stdout


def test_the_migration_makes_old_absolute_paths_relative(tmp_path: Path) -> None:
    db_path = tmp_path / "lib.sqlite3"
    with sqlite3.connect(db_path) as c:
        c.execute("CREATE TABLE book (id INTEGER PRIMARY KEY, sha256 TEXT, file_path TEXT)")
        sha = "ab" * 32
        c.executemany(
            "INSERT INTO book VALUES (?, ?, ?)",
            [
                (1, sha, f"/home/olduser/.local/share/Margin/books/{sha}.epub"),
                (2, "cd" * 32, "/somewhere/else/book.pdf"),  # not a library copy: left alone
                (3, "ef" * 32, ""),
            ],
        )
    db = pw.SqliteDatabase(str(db_path))
    migrations._v10_relative_copies(db)
    rows = dict(db.execute_sql("SELECT id, file_path FROM book").fetchall())
    assert rows == {1: f"books/{sha}.epub", 2: "/somewhere/else/book.pdf", 3: ""}
