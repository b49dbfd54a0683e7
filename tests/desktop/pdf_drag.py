"""A real mouse drag over one occurrence of some words on a PDF page (tests), and the PDF whose
page 2 holds the same sentence twice."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.library import BookInfo, Library
from desktop.reader.pdf_marks import find_words
from desktop.reader.pdf_view import PdfView

# stands twice on page 2 of pdflatex-4-pages.pdf, across a line end each time
PHRASE = "Is there a difference between this text and some nonsense like “Huardest gefburn”?"
PAGE = 2


def twice_pdf(library: Library, pdf_dir: Path) -> tuple[BookInfo, str, int, int]:
    """pdflatex-4-pages.pdf imported: the book, page 2's stored text and where PHRASE starts
    in it the first and the second time."""
    book = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    stored = library.page(book.id, PAGE).text
    pattern = r"\s+".join(re.escape(w) for w in PHRASE.split())
    first, second = [m.start() for m in re.finditer(pattern, stored)][:2]
    return book, stored, first, second


def open_pdf(win: Any, book: BookInfo, qtbot: Any) -> PdfView:
    """``book`` opened at PAGE in the window, its page drawn."""
    win.open_book(book.id, PAGE)
    view = win.reader.view
    assert isinstance(view, PdfView)
    qtbot.waitUntil(view.is_drawn, timeout=10000)
    return view


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
