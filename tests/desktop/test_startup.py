"""Opening the library at start-up: off the UI thread, with a notice while a new version
updates (migrates) it."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QProgressDialog

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from core.store.migrations import SCHEMA_VERSION
from desktop.app import UPDATING, open_library
from tests.desktop.test_window import run_until


def _library_of_the_previous_version(home: Path, books_dir: Path) -> None:
    paths = resolve_paths(home)
    library = Library.open(paths)
    import_book(library, books_dir / "metamorphosis.txt")
    library.close()
    con = sqlite3.connect(paths.database)
    con.execute("DROP TABLE spoiler_stats")  # what schema 9 added
    con.execute("PRAGMA user_version = 8")
    con.commit()
    con.close()


def _notices() -> list[QProgressDialog]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QProgressDialog) and w.isVisible()
    ]


@pytest.mark.parametrize("quiet", [False, True])
def test_an_update_says_so_and_the_library_works_after(
    tmp_path: Path, books_dir: Path, qtbot: Any, caplog: pytest.LogCaptureFixture, quiet: bool
) -> None:
    home = tmp_path / "home"
    _library_of_the_previous_version(home, books_dir)
    seen: list[str] = []

    def look() -> None:
        seen.extend(d.labelText() for d in _notices())

    with caplog.at_level(logging.INFO, logger="margin"):
        margin = run_until(
            qtbot, _watching(open_library(resolve_paths(home), quiet=quiet, notice_after=0), look)
        )
    try:
        assert (UPDATING in seen) is not quiet, seen
        assert not _notices()  # gone once the library is open
        assert ("updating the library's database" in caplog.text) is not quiet
        # opened on a worker thread; used here, on the UI thread
        db = margin.db
        assert db.execute_sql("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        book = margin.library.list_books()[0]
        assert margin.search.search_book(book.id, "Gregor sister violin")
        assert "strenuous career" in margin.library.page(book.id, 3).text
    finally:
        margin.close()


async def _watching(coro: Any, look: Any) -> Any:
    """Run ``coro``, calling ``look`` every few milliseconds meanwhile (the loop is free)."""
    import asyncio

    task = asyncio.ensure_future(coro)
    while not task.done():
        look()
        await asyncio.sleep(0.002)
    return task.result()


def test_a_library_that_cannot_open_raises_for_the_caller(tmp_path: Path, qtbot: Any) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "library.sqlite3").write_bytes(b"this is not a database" * 100)
    from core.errors import StorageError

    with pytest.raises(StorageError, match="damaged"):
        run_until(qtbot, open_library(resolve_paths(home), notice_after=0))
    assert not _notices()
