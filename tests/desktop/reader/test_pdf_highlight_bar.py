"""A highlight in a PDF opens the same bar as in a text book (issue 39, item 5): a real click
on it shows its colours, Note…, Ask…, Copy and Delete; Enter with the selection in it (or on
a screen that shows one) opens it from the keyboard, Tab goes through it, Esc gives the page
the keyboard back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.store.library import Library
from desktop.reader.pdf_view import PdfView
from tests.desktop.pdf_drag import PAGE, PHRASE, drag_over_words, open_pdf, twice_pdf
from tests.desktop.reader.conftest import alice_window
from tests.support.shots import save_shot

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


def _on_highlight(view: PdfView, book_id: int, library: Library) -> QPoint:
    """A point of the canvas inside the saved highlight's first line, scrolled into view."""
    [saved] = library.list_highlights(book_id)
    poly = saved.anchor["polys"][0]
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    rect = view.rects[saved.page - 1]
    x = rect.left() + (min(xs) + max(xs)) / 2 * view.scale
    y = rect.top() + (min(ys) + max(ys)) / 2 * view.scale
    view.ensureVisible(int(x), int(y), 50, 200)
    QApplication.processEvents()
    return QPoint(round(x), round(y))


def _key(widget: Any, key: Qt.Key) -> None:
    QTest.keyClick(widget, key)
    QApplication.processEvents()


def test_a_pdf_highlight_opens_its_bar_by_click_and_by_keys(
    library: Library, pdf_dir: Path, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    book, stored, first, _second = twice_pdf(library, pdf_dir)
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        win.resize(1200, 900)
        view = open_pdf(win, book, qtbot)
        drag_over_words(view, PAGE, PHRASE, stored, first)
        qtbot.waitUntil(win.reader.selection_bar.isVisible, timeout=3000)
        QTest.mouseClick(win.reader.selection_bar.buttons["highlight:green"], LEFT)
        qtbot.waitUntil(lambda: len(library.list_highlights(book.id)) == 1, timeout=3000)
        bar = win.reader.highlight_actions.bar
        assert not bar.isVisible()

        point = _on_highlight(view, book.id, library)
        QTest.mouseClick(view.canvas, LEFT, NONE, point)
        QApplication.processEvents()
        save_shot(win.grab(), "pdf_highlight_clicked.png")
        assert bar.isVisible(), "▶ clicking a PDF highlight opened nothing"
        below = view.canvas.mapTo(win.reader, point)
        assert 0 < bar.geometry().top() - below.y() < 60, "the bar is just below the click"
        assert bar.buttons["colour:green"].isChecked()
        QTest.mouseClick(bar.buttons["colour:pink"], LEFT)
        QApplication.processEvents()
        assert library.list_highlights(book.id)[0].colour == "pink"
        assert [c for c, _s, _p in view.highlights[PAGE]] == ["pink"], "drawn in its new colour"
        QTest.mouseClick(bar.buttons["note"], LEFT)
        QTest.keyClicks(bar.note, "twice on this page")
        _key(bar.note, Qt.Key.Key_Return)
        assert library.list_highlights(book.id)[0].note == "twice on this page"
        assert not bar.isVisible()

        # a click beside the highlight opens nothing
        QTest.mouseClick(
            view.canvas, LEFT, NONE, QPoint(int(view.rects[PAGE - 1].left()) + 5, point.y() - 200)
        )
        QApplication.processEvents()
        assert not bar.isVisible()

        # the keyboard alone: Enter on a screen showing it, Tab to Copy, Esc, Enter, Delete
        view.setFocus()
        _key(view, Qt.Key.Key_Return)
        assert bar.isVisible() and bar.isAncestorOf(QApplication.focusWidget())
        assert QApplication.focusWidget() is bar.buttons["colour:pink"]
        _key(bar, Qt.Key.Key_Escape)
        assert not bar.isVisible() and view.hasFocus(), "▶ Esc did not give the page the keys"
        _key(view, Qt.Key.Key_Return)
        for _ in range(10):
            if QApplication.focusWidget() is bar.buttons["delete"]:
                break
            _key(QApplication.focusWidget(), Qt.Key.Key_Tab)
        _key(QApplication.focusWidget(), Qt.Key.Key_Space)
        assert library.list_highlights(book.id) == []
        assert not view.highlights.get(PAGE) and view.hasFocus()
