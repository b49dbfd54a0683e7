"""The library's sort order is kept across restarts (chosen with the keyboard, the window
closed and opened again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.app import Margin
from core.books.importer import import_book
from tests.desktop.conftest import close_window, open_window


def test_the_sort_order_is_kept_across_restarts(
    app: Margin, qtbot: Any, books_dir: Path, real_font: str
) -> None:
    for name in ("pride_and_prejudice", "alice_in_wonderland", "metamorphosis"):
        import_book(app.library, books_dir / f"{name}.epub")
    win = open_window(app, qtbot)
    win.books.refresh_library()
    win.panes.show_library()
    panel = win.library_panel
    assert panel.sort.currentData() == "recent"
    panel.sort.setFocus()
    QTest.keyClick(panel.sort, Qt.Key.Key_Down)  # Recently read → Title
    QApplication.processEvents()
    assert panel.sort.currentData() == "title"
    close_window(qtbot, win)
    again = open_window(app, qtbot)
    again.books.refresh_library()
    qtbot.waitUntil(lambda: len(again.library_panel.book_ids()) == 3, timeout=5000)
    try:
        assert again.library_panel.sort.currentData() == "title", "▶ the sort was forgotten"
        titles = [app.library.get_book(i).title for i in again.library_panel.book_ids()]
        assert titles == sorted(titles, key=str.casefold)
    finally:
        close_window(qtbot, again)
