"""A real mouse drag over one occurrence of some words on a PDF page (tests)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from desktop.reader.pdf_marks import find_words
from desktop.reader.pdf_view import PdfView


def drag_over_words(view: PdfView, page: int, words: str, stored: str, near: int) -> None:
    """Press at the first letter of ``words`` (the occurrence nearest ``near`` in the stored
    page text), move to the last and release, as a reader selects with the mouse."""
    raw = view.document.getAllText(page - 1).text()
    place = find_words(raw, words, stored, near)
    assert place is not None
    boxes = [p.boundingRect() for p in view.document.getSelectionAtIndex(page - 1, *place).bounds()]
    rect = view.rects[page - 1]

    def on_canvas(x: float, y: float) -> QPoint:
        return QPoint(round(rect.left() + x * view.scale), round(rect.top() + y * view.scale))

    start = on_canvas(boxes[0].left() + 0.5, boxes[0].center().y())
    end = on_canvas(boxes[-1].right() - 0.5, boxes[-1].center().y())
    view.ensureVisible(start.x(), start.y(), 50, 200)
    QTest.mousePress(view.canvas, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(view.canvas, end)
    QTest.mouseRelease(view.canvas, Qt.MouseButton.LeftButton, pos=end)
