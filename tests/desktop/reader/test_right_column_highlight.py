"""Highlighting in the right-hand column of a two-column screen keeps the screen where it is,
and the selection bar sits by the selection, not over the top lines (issue 39, item 3): a
real mouse drag over a line of the right column, a real click on a colour of the bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.desktop.conftest import close_window, open_book_file, open_window
from tests.support.shots import save_shot


def test_highlight_in_right_column_keeps_the_screen(
    app: Any, qtbot: Any, real_font: str, books_dir: Path
) -> None:
    win = open_window(app, qtbot, (1600, 1000))
    try:
        book_id = open_book_file(win, books_dir / "pride_and_prejudice.epub", page=75)
        reader, view = win.reader, win.reader.view
        view.setFocus()
        QApplication.processEvents()
        assert view.pager.column_count() == 2
        before = (view.pager.screen_start(), reader.page)
        viewport = view.viewport()
        x, y = view.pager.column_x(1) + 40, viewport.height() // 2
        left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
        QTest.mousePress(viewport, left, none, QPoint(x, y))
        for dx in range(20, 300, 40):
            QTest.mouseMove(viewport, QPoint(x + dx, y))
        QTest.mouseRelease(viewport, left, none, QPoint(x + 300, y))
        QApplication.processEvents()
        text = view.marks.selected_text().strip()
        assert len(text) > 10
        bar = reader.selection_actions.bar
        assert bar.isVisible()
        line = QRect(
            viewport.mapTo(reader, QPoint(x, y - 4)), viewport.mapTo(reader, QPoint(x + 300, y + 4))
        )
        assert not bar.geometry().intersects(line), "▶ the bar covers the selected line"
        assert bar.geometry().top() > viewport.mapTo(reader, QPoint(0, y - 60)).y(), (
            f"▶ the bar is far from the selection: {bar.geometry()} for a line at y {y}"
        )
        save_shot(win.grab(), "item3_selected.png")
        QTest.mouseClick(bar.buttons["highlight:green"], left)
        QApplication.processEvents()
        save_shot(win.grab(), "item3_after_highlight.png")
        assert (view.pager.screen_start(), reader.page) == before, "▶ highlighting moved the screen"
        saved = win.library.list_highlights(book_id)
        assert [h.colour for h in saved] == ["green"]
        assert 75 < saved[0].page <= view.pager.screen_pages()[1]  # a later page of the screen
        assert text in saved[0].text
    finally:
        close_window(qtbot, win)
