"""The side panel starts wide enough for its tabs and a readable line, widens with its
splitter and keeps that width, and the Contents button opens the contents (issue 39, item
8). Real clicks on the toolbar and the tabs, a real drag of the splitter's handle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolButton

from core.books.importer import import_book
from desktop.reader.side_panels import BOOK_SHARE
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window
from tests.support.shots import save_shot

LEFT = Qt.MouseButton.LeftButton


def _window(app: Any, qtbot: Any, size: tuple[int, int], restore: bool = False) -> Any:
    win = MainWindow(app, restore=restore)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


def _settle(qtbot: Any) -> None:
    QApplication.processEvents()
    qtbot.wait(30)  # the panel makes room on the next turn of the event loop


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_the_side_panel_shows_every_tab_and_a_readable_line(
    app: Any, qtbot: Any, real_font: str, books_dir: Path, size: tuple[int, int]
) -> None:
    book = import_book(app.library, books_dir / "pride_and_prejudice.epub").book
    win = _window(app, qtbot, size)
    try:
        win.open_book(book.id, 75)
        QTest.mouseClick(win.side_button, LEFT)  # Contents
        _settle(qtbot)
        side = win.reader.side
        assert side.count() == 7
        tabs = side.rows.buttons
        assert [b.text() for b in tabs] == [side.tabText(i) for i in range(7)]
        for button in tabs:
            shown = button.geometry()
            assert button.isVisible() and shown.width() >= button.sizeHint().width()
            assert shown.right() <= side.rows.width() and shown.bottom() <= side.rows.height()
        arrows = [a for a in side.findChildren(QToolButton) if "Scroll" in a.objectName()]
        assert not any(a.isVisible() for a in arrows), "scroll arrows are shown"
        # a readable line: some 40 characters of the panel's font
        assert side.column.width() >= 40 * side.fontMetrics().averageCharWidth()
        assert win.reader.split.sizes()[1] >= BOOK_SHARE * win.width() - 1
        save_shot(win.grab(), f"item8_side_{size[0]}.png")
    finally:
        close_window(qtbot, win)


def test_contents_button_opens_the_contents_and_the_width_is_kept(
    app: Any, qtbot: Any, real_font: str, books_dir: Path
) -> None:
    book = import_book(app.library, books_dir / "pride_and_prejudice.epub").book
    win = _window(app, qtbot, (1600, 1000))
    try:
        win.open_book(book.id, 75)
        QTest.mouseClick(win.side_button, LEFT)
        _settle(qtbot)
        side = win.reader.side
        find = side.rows.button("Find")
        assert find is not None
        QTest.mouseClick(find, LEFT)
        assert side.current_name() == "Find"
        QTest.mouseClick(win.side_button, LEFT)  # closed
        assert not side.isVisible()
        QTest.mouseClick(win.side_button, LEFT)  # opened again: on the contents
        _settle(qtbot)
        assert side.isVisible() and side.current_name() == "Contents"

        width = side.column.width()
        handle = win.reader.split.handle(1)
        middle = handle.rect().center()
        QTest.mousePress(handle, LEFT, Qt.KeyboardModifier.NoModifier, middle)
        for dx in (20, 60, 100):
            QTest.mouseMove(handle, middle + QPoint(dx, 0))
        QTest.mouseRelease(handle, LEFT, Qt.KeyboardModifier.NoModifier, middle + QPoint(100, 0))
        _settle(qtbot)
        widened = side.column.width()
        assert widened >= width + 80, (width, widened)
    finally:
        close_window(qtbot, win)  # the window saves its layout
    again = _window(app, qtbot, (1600, 1000), restore=True)
    try:
        qtbot.waitUntil(lambda: again.reader.book is not None, timeout=5000)
        _settle(qtbot)
        assert again.reader.side.isVisible()
        assert abs(again.reader.side.column.width() - widened) <= 4
    finally:
        close_window(qtbot, again)
