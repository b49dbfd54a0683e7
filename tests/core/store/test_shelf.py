"""``read_shelf`` (sqlite3 alone, before the store's code loads) lists exactly what
``Library.list_books`` lists, in the same order."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from core.store import models as m
from core.store.library import Library
from core.store.shelf import read_shelf

ROOT = Path(__file__).resolve().parents[3]


def _book(n: int, **fields: object) -> None:
    values: dict[str, object] = {
        "title": f"Book {n} 100% ?#",
        "format": "epub",
        "sha256": f"{n:064x}",
        "file_path": f"books/{n}.epub",
        "file_size": 1000 + n,
        "page_count": 40,
        **fields,
    }
    m.Book.create(**values)


def test_the_shelf_read_alone_is_the_library_s_list(library: Library) -> None:
    when = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)
    _book(1, added_at=when)
    _book(2, added_at=when, opened_at=when + dt.timedelta(days=2), page=7, read_to=9)
    _book(3, added_at=when + dt.timedelta(days=1), finished=True, author="A. Writer")
    _book(4, status="importing")  # not on the shelf
    _book(5, file_path="/elsewhere/5.epub", added_at=dt.datetime(2026, 1, 2), parser_version=2)
    _book(6, added_at=when + dt.timedelta(days=1), language="fr")  # same time: by id
    listed = library.list_books()
    assert [b.id for b in listed] == [2, 6, 3, 1, 5]
    assert read_shelf(library.paths.database, library.paths.data) == listed


def test_an_empty_library_has_an_empty_shelf(library: Library) -> None:
    assert read_shelf(library.paths.database, library.paths.data) == []


def test_a_missing_or_foreign_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_shelf(tmp_path / "none.sqlite3", tmp_path)
    other = tmp_path / "other.sqlite3"
    other.write_bytes(b"not a database at all" * 10)
    with pytest.raises(Exception):  # noqa: B017 (sqlite3's own error: the caller falls back)
        read_shelf(other, tmp_path)


def test_reading_the_shelf_loads_neither_peewee_nor_the_store() -> None:
    code = (
        "import sys, core.store.shelf, core.store.migrations;"
        " print(sorted(n for n in ('peewee', 'core.store.models', 'core.store.library',"
        " 'urllib.parse') if n in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_a_folder_name_with_uri_characters_is_read(library: Library, tmp_path: Path) -> None:
    import shutil

    _book(1, added_at=dt.datetime(2026, 1, 2))
    library.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    odd = tmp_path / "a %20 b?c#d é"
    odd.mkdir()
    shutil.copy(library.paths.database, odd / "library.sqlite3")
    shelf = read_shelf(odd / "library.sqlite3", odd)
    assert [b.sha256 for b in shelf] == [f"{1:064x}"]
    assert shelf[0].file_path == str(odd / "books" / "1.epub")
