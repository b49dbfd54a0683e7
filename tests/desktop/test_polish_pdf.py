"""PDF highlights drawn in their style, as the text view draws them (issue 28 leftover):
a background, an underline in the highlight's line colour, or a line through over a wash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.highlight_style import set_style
from desktop.highlights.look import PDF_INK, line_colour
from desktop.reader.pdf_view import PdfView
from tests.support.pdfgen import make_text_pdf

WORDS = "Marked words stand here"


def near(pixel: QColor, want: QColor, tolerance: int = 40) -> bool:
    return all(
        abs(a - b) <= tolerance
        for a, b in zip(
            (pixel.red(), pixel.green(), pixel.blue()),
            (want.red(), want.green(), want.blue()),
            strict=True,
        )
    )


def drawn(window: Any, tmp_path: Path, style: str, qtbot: Any) -> tuple[QImage, QRect]:
    """The canvas with one blue highlight of ``style`` on the words, and the words' box."""
    texts = [f"Opening line. {WORDS} in the middle. Closing line of the page."]
    book = import_book(window.library, make_text_pdf(tmp_path / "h.pdf", texts)).book
    window.books.refresh_library()
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, PdfView)
    view.set_scale(3.0)
    QApplication.processEvents()
    assert view.mark_text(1, WORDS)
    assert view.mark is not None
    polys = [
        [[poly.at(i).x(), poly.at(i).y()] for i in range(poly.size())] for poly in view.mark[1]
    ]
    view.mark = None
    saved = window.library.add_highlight(book.id, 1, WORDS, colour="blue", anchor={"polys": polys})
    set_style(saved.id, style)
    window.reader.refresh_highlights()
    qtbot.waitUntil(view.is_drawn, timeout=5000)  # the page's text under the highlight
    image = view.canvas.grab().toImage()
    page_rect = view.rects[0]
    box = view.canvas._to_widget(view.highlights[1][0][2][0], page_rect, view.scale)
    return image, box.boundingRect().toRect()


def count(image: QImage, rows: range, box: QRect, colour: QColor, tolerance: int = 40) -> int:
    return sum(
        near(image.pixelColor(QPoint(x, y)), colour, tolerance)
        for y in rows
        for x in range(box.left() + 2, box.right() - 2)
    )


@pytest.mark.parametrize("style", ["highlight", "underline", "strike"])
def test_a_pdf_highlight_is_drawn_in_its_style(
    window: Any, tmp_path: Path, style: str, qtbot: Any
) -> None:
    image, box = drawn(window, tmp_path, style, qtbot)
    width = box.width() - 4
    # blue over white, as the page shows a background highlight (alpha 110 of 255)
    wash = QColor(120 + (255 - 120) * 145 // 255, 180 + (255 - 180) * 145 // 255, 255)
    top_rows = range(box.top() + 1, box.top() + 3)  # above the letters: no ink there
    bottom = range(box.bottom() - 2, box.bottom() + 1)
    middle = range(box.center().y() - 1, box.center().y() + 2)
    if style == "highlight":
        assert count(image, top_rows, box, wash) > width, "a blue background"
        assert count(image, bottom, box, line_colour("blue")) < width // 4
    elif style == "underline":
        assert count(image, top_rows, box, QColor("white")) > width, "no background"
        assert count(image, bottom, box, line_colour("blue")) > width * 0.9, "a blue line"
    else:
        faint = QColor(120 + (255 - 120) * 200 // 255, 180 + (255 - 180) * 200 // 255, 255)
        assert count(image, top_rows, box, faint, 8) > width, "a faint blue wash"
        assert count(image, top_rows, box, wash, 8) < width // 4, "not the full background"
        assert count(image, middle, box, QColor(PDF_INK)) > width * 0.9, "a line through"
