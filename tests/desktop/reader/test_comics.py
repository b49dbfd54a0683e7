"""Comics in the window: a CBZ and a pre-paginated EPUB open as picture pages, turn with real
key presses and clicks in the book's direction (right to left for manga), show two pages side
by side when the view is wide (the first page of a pair on the right when right to left),
and the chat says the assistant cannot read pictures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.image_pages import ImagePagesView
from tests.desktop.conftest import close_window, open_window
from tests.support.comics import make_cbz, make_fixed_layout_epub, page_colour


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = open_window(app, qtbot, (900, 900))
    yield win
    close_window(qtbot, win)


def _open(window: Any, library: Library, path: Path, qtbot: Any) -> ImagePagesView:
    book = import_book(library, path).book
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, ImagePagesView)
    view.setFocus()
    qtbot.waitUntil(view.is_drawn, timeout=5000)
    return view


def _key(view: ImagePagesView, key: Qt.Key) -> None:
    QTest.keyClick(view, key)
    QApplication.processEvents()


def _colour_at(view: ImagePagesView, qtbot: Any, x: float) -> tuple[int, int, int]:
    """The colour drawn at ``x`` (a fraction of the width), low on the page (under the bars)."""
    qtbot.waitUntil(view.is_drawn, timeout=5000)
    image = view.canvas.grab().toImage()
    rects = [r for _, r in view.placed()]
    y = int(max(r.top() + r.height() * 0.9 for r in rects))
    colour = QColor(image.pixel(int(image.width() * x), y))
    return (colour.red(), colour.green(), colour.blue())


def _is(colour: tuple[int, int, int], page: int) -> bool:
    want = page_colour(page - 1)
    return all(abs(c - w) < 30 for c, w in zip(colour, want, strict=True))


def test_manga_cbz_turns_right_to_left_with_keys_and_clicks(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    view = _open(window, library, make_cbz(tmp_path / "manga.cbz", 6, manga=True), qtbot)
    assert view.rtl and not view.wide()  # a tall view: one page at a time
    assert _is(_colour_at(view, qtbot, 0.5), 1)
    _key(view, Qt.Key.Key_Left)  # right to left: the left arrow reads on
    assert window.reader.page == 2 and _is(_colour_at(view, qtbot, 0.5), 2)
    _key(view, Qt.Key.Key_Left)
    assert window.reader.page == 3
    _key(view, Qt.Key.Key_Right)
    assert window.reader.page == 2
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(20, 300))
    assert window.reader.page == 3, "a click on the left side reads on"
    _key(view, Qt.Key.Key_End)
    assert window.reader.page == 6
    _key(view, Qt.Key.Key_Left)
    assert window.reader.page == 6, "the last page stays"
    notice = window.chat.pictures
    qtbot.waitUntil(notice.isVisible, timeout=5000)
    assert "cannot read pictures" in notice.text.text()


def test_left_to_right_comic_and_the_direction_setting(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    view = _open(window, library, make_cbz(tmp_path / "plain.cbz", 4), qtbot)
    assert not view.rtl
    _key(view, Qt.Key.Key_Right)
    assert window.reader.page == 2
    view.set_rtl(True)  # the view's "Right to left (manga)" setting
    _key(view, Qt.Key.Key_Left)
    assert window.reader.page == 3
    book_id = window.reader.book.id
    assert window.reader.memory.book(book_id).view["pictures"]["rtl"] is True
    window.reader.close_book()
    window.open_book(book_id, 1)
    reopened = window.reader.view
    assert isinstance(reopened, ImagePagesView) and reopened.rtl, "the setting is kept per book"


def test_pre_paginated_rtl_epub_spreads_pages_right_to_left(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    window.resize(1500, 800)  # wide: two pages side by side
    QApplication.processEvents()
    view = _open(window, library, make_fixed_layout_epub(tmp_path / "m.epub", 5, rtl=True), qtbot)
    qtbot.waitUntil(lambda: view.wide(), timeout=3000)
    assert view.rtl and view.spread() == [1], "the cover alone"
    _key(view, Qt.Key.Key_Left)
    assert view.spread() == [2, 3] and window.reader.page == 2
    right, left = _colour_at(view, qtbot, 0.7), _colour_at(view, qtbot, 0.3)
    assert _is(right, 2) and _is(left, 3), "page 2 on the right, page 3 on its left"
    _key(view, Qt.Key.Key_Space)
    assert view.spread() == [4, 5]
    _key(view, Qt.Key.Key_Right)
    assert view.spread() == [2, 3]
    view.set_spreads(False)
    assert view.spread() == [2]


def test_fit_width_scrolls_down_the_page_before_turning(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    window.resize(1500, 700)  # wide and low: a page fitted to the width is taller than the view
    QApplication.processEvents()
    view = _open(window, library, make_cbz(tmp_path / "w.cbz", 3), qtbot)
    view.set_spreads(False)
    assert window.reader.host.zoom(1)  # zoom in: fit the width
    assert view.fit == "width"
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0, "the page is taller than the view"
    _key(view, Qt.Key.Key_Space)
    assert window.reader.page == 1 and bar.value() > 0, "first down the page"
    while bar.value() < bar.maximum():
        _key(view, Qt.Key.Key_Space)
    _key(view, Qt.Key.Key_Space)
    assert window.reader.page == 2 and bar.value() == 0, "then the next page, from its top"
    window.reader.host.zoom(-1)
    assert view.fit == "page" and view.verticalScrollBar().maximum() == 0
