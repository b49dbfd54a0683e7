"""The window's side of issue 27: Book › Repair search index, and friends."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from core.books.importer import import_book
from core.store.library import Library
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window
from tests.reliability.test_hardening_repair import _scramble_index_blocks


def in_thread(fn: Any) -> Any:
    """Run ``fn`` on a fresh thread (its own database connection: the UI thread's may hold
    a read snapshot from before the test changed the file)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn).result()


@pytest.fixture
def window(app: Any, qtbot: Any) -> Any:
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    yield win
    close_window(qtbot, win)


def test_repair_search_index_from_the_book_menu(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.add_note(book.id, "kept through the repair")
    _scramble_index_blocks()
    assert in_thread(library.index_damaged)
    assert window.action_repair_index.text().replace("&", "") == "Repair search index"
    window.action_repair_index.trigger()
    qtbot.waitUntil(lambda: "rebuilt" in window.statusBar().currentMessage(), timeout=20000)
    assert not in_thread(library.index_damaged)
    assert window.app.search.search_book(book.id, "rabbit")
    assert [n.text for n in library.list_notes(book.id)] == ["kept through the repair"]


def test_the_window_waits_for_another_process_updating_the_library(
    tmp_path: Path, books_dir: Path, qtbot: Any
) -> None:
    import asyncio

    from core.paths import resolve_paths
    from core.store.migrations import SCHEMA_VERSION
    from desktop.app import open_library
    from tests.reliability.test_hardening_update import (
        library_of_the_previous_version,
        slow_update,
    )

    home = tmp_path / "home"
    library_of_the_previous_version(home, books_dir)
    with slow_update(home):
        task = asyncio.ensure_future(open_library(resolve_paths(home), notice_after=0))
        qtbot.waitUntil(task.done, timeout=30000)
        margin = task.result()
    try:
        version = margin.db.execute_sql("PRAGMA user_version").fetchone()[0]
        assert version == SCHEMA_VERSION
        assert margin.library.list_books()
    finally:
        margin.close()


def test_a_right_to_left_override_in_a_title_does_not_flip_the_window_title(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    library.db.execute_sql(
        "UPDATE book SET title = ? WHERE id = ?", ("\u202eevil\u202c\n Title\x1b[2J", book.id)
    )
    window.books.refresh_library()
    window.open_book(book.id)
    title = window.windowTitle()
    assert title == "evil Title[2J — Margin", repr(title)


def test_a_book_removed_elsewhere_is_explained_in_window_words(
    tmp_path: Path, library: Library, books_dir: Path
) -> None:
    from core.errors import MarginError
    from core.store.conversations import Conversations
    from tests.reliability.clirun import run

    book = import_book(library, books_dir / "metamorphosis.txt").book
    conversation = Conversations(library.db).create(book.id, "About Gregor")
    done = run(library.paths.data, "delete", str(book.id), "--yes")  # the CLI, elsewhere
    assert done.returncode == 0, done.stderr
    for lookup in (
        lambda: library.get_book(book.id),
        lambda: Conversations(library.db).get(conversation.id),
    ):
        with pytest.raises(MarginError) as err:
            in_thread(lookup)
        text = str(err.value)
        assert "another Margin window" in text and "'margin" not in text, text
    cli = run(library.paths.data, "show", str(book.id))
    assert "margin books" in cli.stderr, "the command line still says what to type"
