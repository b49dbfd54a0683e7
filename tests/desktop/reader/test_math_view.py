"""MathML on a page (issue 29, item 1): drawn in the view with its exponent raised and its
identifiers in italics, while the page text keeps the linear form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QTextCharFormat, QTextCursor

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.text_view import TextView
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader
from tests.support.shots import save_shot

FORMULA = (
    "<p>Expand <math><mrow><mi>x</mi><mo>=</mo><msup><mfenced><mrow><mi>a</mi><mo>+</mo>"
    "<mi>b</mi></mrow></mfenced><mn>2</mn></msup></mrow></math> and divide by "
    "<math><msub><mi>n</mi><mi>k</mi></msub></math>.</p>"
)


def _format_of(view: TextView, words: str, offset: int) -> QTextCharFormat:
    found = view.document().find(words)
    assert not found.isNull(), words
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + offset + 1)
    return cursor.charFormat()


def test_a_formula_is_drawn_with_its_superscript_raised(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, make_epub(tmp_path / "m.epub", [("Algebra", FORMULA)])).book
    assert "Expand x = (a + b)^2 and divide by n_k." in library.page(book.id, 1).text
    _reader, view = open_reader(library, qtbot, book, (700, 400))
    assert "x = (a + b)2" in view.toPlainText()  # drawn, not written with a caret
    exponent = _format_of(view, "(a + b)2", len("(a + b)"))
    assert exponent.verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript
    index = _format_of(view, "nk", 1)
    assert index.verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSubScript
    assert _format_of(view, "x = ", 0).fontItalic()
    save_shot(view.viewport().grab(), "math-light.png")


def _ink_bottom(image: Any, left: int, right: int, top: int, bottom: int) -> int:
    """The lowest row with dark ink between two x positions (the glyph's bottom)."""
    lowest = -1
    for y in range(max(0, top), min(image.height(), bottom)):
        for x in range(max(0, left), min(image.width(), right)):
            if image.pixelColor(x, y).lightness() < 128:
                lowest = y
                break
    return lowest


def test_the_exponent_is_drawn_above_the_baseline(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    """Pixels: the ink of "2" in (a + b)² ends well above the baseline "b" sits on."""
    book = import_book(library, make_epub(tmp_path / "p.epub", [("Algebra", FORMULA)])).book
    _reader, view = open_reader(library, qtbot, book, (700, 400))
    found = view.document().find("(a + b)2")
    start = found.selectionStart()

    def span(offset: int) -> tuple[int, int, int, int]:
        cursor = QTextCursor(view.document())
        cursor.setPosition(start + offset)
        left = view.cursorRect(cursor)
        cursor.setPosition(start + offset + 1)
        right = view.cursorRect(cursor)
        return left.x() + 1, right.x() - 1, left.top() - 4, left.bottom() + 4

    image = view.viewport().grab().toImage()
    b_bottom = _ink_bottom(image, *span(len("(a + ")))
    two_bottom = _ink_bottom(image, *span(len("(a + b)")))
    assert b_bottom > 0 and two_bottom > 0, (b_bottom, two_bottom)
    assert two_bottom < b_bottom - 3  # raised: a superscript, not "1016"-style run-on text
