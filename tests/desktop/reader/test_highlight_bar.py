"""A highlight is edited where it is (issue 39, item 5): a new highlight asks nothing; a
click on it opens its bar (colour, note, ask, copy, delete) beside it, where a note is
written and the colour changed; Enter on a highlight opens the bar from the keyboard, whose
Tab and Space delete it. Real mouse clicks and key presses in the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from desktop.theme import highlight_colour
from tests.desktop.conftest import close_window, open_book_file, open_window
from tests.support.shots import save_shot

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


def _drawn(view: Any, colour: str) -> list[str]:
    tone = highlight_colour(colour)
    return [
        s.cursor.selectedText().strip()
        for s in view.extraSelections()
        if s.format.background() == tone
    ]


def _key(widget: Any, key: Qt.Key) -> None:
    QTest.keyClick(widget, key)
    QApplication.processEvents()


def test_a_highlight_is_noted_recoloured_and_deleted_in_the_book(
    app: Any, qtbot: Any, real_font: str, books_dir: Path, note_dialog: dict[str, Any]
) -> None:
    win = open_window(app, qtbot, (1280, 800))
    try:
        book_id = open_book_file(win, books_dir / "pride_and_prejudice.epub", page=75)
        reader, view, library = win.reader, win.reader.view, win.library
        reader.setProperty("headless", False)  # a note dialog would be asked here
        view.setFocus()
        viewport = view.viewport()
        x, y = view.pager.column_x(0) + 60, viewport.height() // 3
        QTest.mousePress(viewport, LEFT, NONE, QPoint(x, y))
        for dx in range(20, 220, 50):
            QTest.mouseMove(viewport, QPoint(x + dx, y))
        QTest.mouseRelease(viewport, LEFT, NONE, QPoint(x + 220, y))
        QApplication.processEvents()
        text = view.marks.selected_text()
        QTest.mouseClick(reader.selection_bar.buttons["highlight:green"], LEFT)
        QApplication.processEvents()
        assert note_dialog["asked"] == 0, "▶ a new highlight asked for a note"
        [saved] = library.list_highlights(book_id)
        assert saved.text == text and saved.note == ""

        bar = reader.highlight_actions.bar
        QTest.mouseClick(viewport, LEFT, NONE, QPoint(x + 100, y))  # on the highlight
        QApplication.processEvents()
        save_shot(win.grab(), "item5_clicked.png")
        assert bar.isVisible(), "▶ clicking a highlight opened nothing"
        line = viewport.mapTo(reader, QPoint(x + 100, y))
        assert 0 < bar.geometry().top() - line.y() < 60, "the bar is just below the line"
        assert view.pager.screen_start()[0] == 75  # no page turn either
        QTest.mouseClick(bar.buttons["note"], LEFT)
        assert bar.note.isVisible() and bar.note.hasFocus()
        QTest.keyClicks(bar.note, "Charlotte's plan")
        save_shot(win.grab(), "item5_note.png")
        _key(bar.note, Qt.Key.Key_Return)
        assert library.list_highlights(book_id)[0].note == "Charlotte's plan"
        assert not bar.isVisible()

        QTest.mouseClick(viewport, LEFT, NONE, QPoint(x + 100, y))
        QApplication.processEvents()
        assert (
            bar.buttons["colour:green"].isChecked() and bar.buttons["note"].text() == "Edit note…"
        )
        QTest.mouseClick(bar.buttons["colour:pink"], LEFT)
        QApplication.processEvents()
        assert library.list_highlights(book_id)[0].colour == "pink"
        assert _drawn(view, "pink") == [text] and _drawn(view, "green") == []
        _key(bar, Qt.Key.Key_Escape)
        assert not bar.isVisible() and view.hasFocus()

        # the keyboard alone: the caret in the highlight, Enter, Tab to Delete, Space
        cursor = view.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.Left)
        view.setTextCursor(cursor)
        _key(view, Qt.Key.Key_Return)
        assert bar.isVisible() and bar.isAncestorOf(QApplication.focusWidget())
        for _ in range(8):
            if QApplication.focusWidget() is bar.buttons["delete"]:
                break
            _key(QApplication.focusWidget(), Qt.Key.Key_Tab)
        _key(QApplication.focusWidget(), Qt.Key.Key_Space)
        assert library.list_highlights(book_id) == []
        assert _drawn(view, "pink") == [] and view.hasFocus()
    finally:
        close_window(qtbot, win)
