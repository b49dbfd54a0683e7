"""Fixtures and helpers of the reader's tests: a Reader on real books under the offscreen
platform, driven by real key presses."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog

from core.books.importer import import_book
from core.store.library import BookInfo, Library
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView


@pytest.fixture
def note_dialog(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The "Note (optional)" dialog, answered by the test (never shown)."""
    answer: dict[str, Any] = {"text": "", "ok": True, "asked": 0}

    def get_text(*_a: object, **_k: object) -> tuple[str, bool]:
        answer["asked"] += 1
        return answer["text"], answer["ok"]

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(get_text))
    return answer


@pytest.fixture
def reader(library: Library, qtbot: Any, real_font: str, note_dialog: Any) -> Reader:
    widget = Reader(library)
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def text_view(reader: Reader) -> TextView:
    assert isinstance(reader.view, TextView)
    return reader.view


def open_reader(
    library: Library, qtbot: Any, book: Path | BookInfo, size: tuple[int, int] = (900, 700)
) -> tuple[Reader, TextView]:
    """A shown Reader of its own at ``size`` with ``book`` (a file is imported first) open at
    its first page in the text view."""
    if isinstance(book, Path):
        book = import_book(library, book).book
    reader = Reader(library)
    qtbot.addWidget(reader)
    reader.resize(*size)
    reader.show()
    qtbot.waitExposed(reader)
    reader.open_book(book, 1)
    return reader, text_view(reader)


def press(
    view: Any, key: Qt.Key, mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    QTest.keyClick(view, key, mods)
    QApplication.processEvents()


def visible_offsets(view: TextView) -> list[tuple[int, int, int]]:
    """(page, first offset, last offset) of the text fully on screen, per stored page."""
    line = view.flow.line_height()
    rect = view.viewport().rect()
    first = view.cursorForPosition(QPoint(0, int(line * 0.9))).position()
    last = view.cursorForPosition(
        QPoint(rect.width() - 1, rect.height() - int(line * 0.9))
    ).position()
    spans = []
    position = first
    while position <= last:
        page, offset = view.flow.page_offset(position)
        index = view.flow.loaded.index(page)
        page_end = (
            view.flow.starts[index + 1] - 1
            if index + 1 < len(view.flow.starts)
            else view.flow.end_position()
        )
        upto = min(last, page_end)
        spans.append((page, offset, offset + (upto - position)))
        position = page_end + 1
    return spans


def chapter_pages(library: Library, book_id: int, page: int) -> list[int]:
    rows = library.db.execute_sql(
        "SELECT number, chapter FROM page WHERE book_id = ? ORDER BY number", (book_id,)
    ).fetchall()
    chapter = rows[page - 1][1]
    return [n for n, c in rows if c == chapter]


@contextmanager
def alice_window(library: Library, books_dir: Path, qtbot: Any, page: int) -> Iterator[Any]:
    """A shown window with Alice open at ``page``: yields (window, book); closed after."""
    from core.app import Margin
    from core.books.importer import import_book
    from desktop.window.main_window import MainWindow
    from tests.desktop.conftest import close_window

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id, page)
        yield win, book
    finally:
        close_window(qtbot, win)
