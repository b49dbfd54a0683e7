"""One table of reading keys for every view (issue 39, item 6): in a text book, a PDF and a
book of pictures, each key of the table makes the same move as Page Down or Page Up there
(Left and Right turn the screen in a PDF too, Down turns a screen, not a line), and the
window's own shortcuts do not take them first. Real key presses in the window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from desktop.reader.image_pages import ImagePagesView
from desktop.reader.pdf_view import PdfView
from desktop.reader.text_view import TextView
from desktop.window.shortcut_help import shortcut_rows
from tests.desktop.conftest import close_window, open_window
from tests.support.comics import make_fixed_layout_epub
from tests.support.pdfgen import make_text_pdf

K = Qt.Key
SHIFT = Qt.KeyboardModifier.ShiftModifier
FORWARD = [(K.Key_Space, None), (K.Key_Down, None), (K.Key_Right, None), (K.Key_PageDown, SHIFT)]
BACKWARD = [(K.Key_Up, None), (K.Key_Left, None), (K.Key_Backspace, None), (K.Key_Space, SHIFT)]


def _press(view: Any, key: Qt.Key, mods: Qt.KeyboardModifier | None = None) -> None:
    QTest.keyClick(view, key, mods or Qt.KeyboardModifier.NoModifier)
    QApplication.processEvents()


def _same_moves(view: Any, where: Callable[[], object], name: str) -> None:
    """Each forward key moves as Page Down, each backward key as Page Up."""
    start = where()
    _press(view, K.Key_PageDown)
    on = where()
    assert on != start, f"▶ Page Down did not move the {name}"
    for key, mods in BACKWARD:
        _press(view, key, mods)
        assert where() == start, f"▶ {key.name} in the {name} is not Page Up: {where()}"
        _press(view, K.Key_PageDown)
        assert where() == on
    _press(view, K.Key_PageUp)
    for key, mods in FORWARD:
        _press(view, key, mods)
        assert where() == on, f"▶ {key.name} in the {name} is not Page Down: {where()} {on}"
        _press(view, K.Key_PageUp)
        assert where() == start


def _open(win: Any, path: Path, qtbot: Any) -> Any:
    book = import_book(win.library, path).book
    win.open_book(book.id, 1)
    view = win.reader.view
    view.setFocus()
    QApplication.processEvents()
    return view


@pytest.fixture
def win(app: Any, qtbot: Any, real_font: str) -> Iterator[Any]:
    window = open_window(app, qtbot, (1000, 800))
    yield window
    close_window(qtbot, window)


def test_text_keys(win: Any, qtbot: Any, books_dir: Path) -> None:
    view = _open(win, books_dir / "metamorphosis.epub", qtbot)
    assert isinstance(view, TextView)
    _press(view, K.Key_PageDown)  # away from the book's first screen
    _same_moves(view, view.top_position, "text")


def test_pdf_keys(win: Any, qtbot: Any, tmp_path: Path) -> None:
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 5)]
    view = _open(win, make_text_pdf(tmp_path / "long.pdf", texts), qtbot)
    assert isinstance(view, PdfView)
    view.set_scale(2.0)
    view.go_to_page(2)
    QApplication.processEvents()
    _same_moves(view, view.position, "PDF")
    _press(view, K.Key_End)  # a PDF without chapters: its last page
    assert win.reader.page == 4
    _press(view, K.Key_Home)
    assert win.reader.page == 1


def test_picture_keys(win: Any, qtbot: Any, tmp_path: Path) -> None:
    view = _open(win, make_fixed_layout_epub(tmp_path / "c.epub", 5), qtbot)
    assert isinstance(view, ImagePagesView)
    qtbot.waitUntil(view.is_drawn, timeout=5000)
    _press(view, K.Key_Right)
    _same_moves(view, lambda: view.current, "book of pictures")


def test_the_shortcut_list_shows_the_reading_keys(win: Any) -> None:
    rows = [r for r in shortcut_rows(win) if r.group == "In the book"]
    keys = {r.what: r.keys for r in rows}
    assert "Down" in keys["The next screen"] and "Space" in keys["The next screen"]
    assert any(what.startswith("The screen to the left") for what in keys)
