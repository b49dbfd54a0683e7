"""The book's own typography as drawn: indents, centred headings, right-aligned letters,
small caps and scene breaks, read from the painted page (and the layout), on a book styled
as Standard Ebooks style theirs and on the Gutenberg fixture; and flattened on request."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QTextBlock, QTextFormat
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.books.model import PageContent
from core.store.library import Library
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from tests.core.books.bookcss_book import styled_epub
from tests.desktop.reader.conftest import text_view


def open_book(reader: Reader, path: Path, page: int = 1) -> TextView:
    reader.resize(900, 900)
    book = import_book(reader.library, path).book
    reader.open_book(book, page)
    QApplication.processEvents()
    view = text_view(reader)
    assert view.pager.column_count() == 1
    return view


def block_with(view: TextView, words: str) -> QTextBlock:
    cursor = view.document().find(words)
    assert not cursor.isNull(), words
    return cursor.block()


def on_screen(view: TextView, block: QTextBlock) -> QRect:
    """The block's rectangle in the viewport, turning pages until it is on screen."""
    for _ in range(30):
        if view.pager.on_screen(block.position()) and view.pager.on_screen(
            block.position() + block.length() - 2
        ):
            break
        view.next_screen()
        QApplication.processEvents()
    column = view.pager.columns[0]
    rect = view.document().documentLayout().blockBoundingRect(block)
    top = int(rect.top() - view.pager.offset_of(column))
    return QRect(0, top, view.viewport().width(), int(rect.height()))


def ink(image: QImage, rect: QRect, background: QColor) -> list[tuple[int, int]]:
    """(x, y) of every drawn pixel in ``rect``."""
    out = []
    for y in range(max(0, rect.top()), min(image.height(), rect.bottom())):
        for x in range(rect.left(), min(image.width(), rect.right())):
            if abs(image.pixelColor(x, y).lightness() - background.lightness()) > 60:
                out.append((x, y))
    return out


def line_rects(view: TextView, block: QTextBlock, rect: QRect) -> list[QRect]:
    layout = block.layout()
    out = []
    for i in range(layout.lineCount()):
        line = layout.lineAt(i)
        out.append(QRect(0, rect.top() + int(line.y()), rect.width(), int(line.height())))
    return out


def grab(view: TextView) -> QImage:
    return view.viewport().grab().toImage()


def text_edges(view: TextView) -> tuple[int, int]:
    """The column's left and right text edges in the viewport."""
    margin = view.pager.side_margin + view.document().documentMargin()
    return int(margin), int(view.viewport().width() - margin)


def test_a_styled_book_is_drawn_as_its_css_says(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    view = open_book(reader, styled_epub(tmp_path))
    background = QColor(view.theme.background)
    left_edge, right_edge = text_edges(view)

    heading = block_with(view, "Chapter One")
    rect = on_screen(view, heading)
    drawn = ink(grab(view), rect, background)
    xs = [x for x, _ in drawn]
    assert drawn, "the heading is drawn"
    left_gap, right_gap = min(xs) - left_edge, right_edge - max(xs)
    assert left_gap > 100 and abs(left_gap - right_gap) < 24, "the heading is centred"

    paragraph = block_with(view, "first1x0")
    rect = on_screen(view, paragraph)
    image = grab(view)
    first, second = line_rects(view, paragraph, rect)[:2]
    indent = min(x for x, _ in ink(image, first, background)) - min(
        x for x, _ in ink(image, second, background)
    )
    em = QFont(view.document().defaultFont()).pointSizeF() * 96 / 72
    assert abs(indent - em) < 4, "a first-line indent of 1em"
    opening = block_with(view, "after0x0")
    assert opening.blockFormat().textIndent() == 0, "no indent after a scene break (hr + p)"

    rule = opening.previous()
    assert rule.blockFormat().hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
    rect = on_screen(view, rule)
    drawn = ink(grab(view), rect, background)
    width = max(x for x, _ in drawn) - min(x for x, _ in drawn)
    assert 0.15 * (right_edge - left_edge) < width < 0.4 * (right_edge - left_edge)
    assert len({y for _, y in drawn}) <= 3, "a thin rule: the scene break"

    signature = block_with(view, "Jane Bennet.")
    rect = on_screen(view, signature)
    xs = [x for x, _ in ink(grab(view), rect, background)]
    assert right_edge - max(xs) < 90 and min(xs) - left_edge > 300, "right-aligned in the quote"
    fragment = signature.begin().fragment()
    assert fragment.charFormat().fontCapitalization() == QFont.Capitalization.SmallCaps

    darcy = view.document().find("Mr. Darcy")
    darcy.setPosition(darcy.selectionStart() + 1)
    assert darcy.charFormat().fontCapitalization() == QFont.Capitalization.SmallCaps
    assert darcy.charFormat().fontWeight() < 600, "the book's <b> is small caps, not bold"

    evil = block_with(view, "Nothing bad happens here.")
    assert not evil.blockFormat().alignment() & 0x4, "a bad rule is not applied"


def test_use_the_books_styles_off_gives_the_readers_look(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    view = open_book(reader, styled_epub(tmp_path))
    reader.set_typography(replace(reader.typography, book_styles=False))
    QApplication.processEvents()
    background = QColor(view.theme.background)
    left_edge, _ = text_edges(view)
    heading = block_with(view, "Chapter One")
    rect = on_screen(view, heading)
    xs = [x for x, _ in ink(grab(view), rect, background)]
    assert min(xs) - left_edge < 10, "the heading starts at the left"
    assert block_with(view, "first1x0").blockFormat().textIndent() == 0
    signature = block_with(view, "Jane Bennet.")
    assert signature.begin().fragment().charFormat().fontCapitalization() != (
        QFont.Capitalization.SmallCaps
    )


def test_the_gutenberg_fixture_keeps_its_centred_headings_and_indents(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    view = open_book(reader, books_dir / "alice_in_wonderland.epub", page=3)
    background = QColor(view.theme.background)
    left_edge, right_edge = text_edges(view)
    heading = next(
        b
        for b in (view.document().findBlockByNumber(n) for n in range(100))
        if b.isValid() and b.blockFormat().headingLevel() and b.text().startswith("CHAPTER")
    )
    rect = on_screen(view, heading)
    xs = [x for x, _ in ink(grab(view), rect, background)]
    assert abs((min(xs) - left_edge) - (right_edge - max(xs))) < 24, "centred as the book sets it"
    body = heading.next()
    while body.isValid() and body.layout().lineCount() < 2:
        body = body.next()
    assert body.blockFormat().textIndent() > 10, "the book's first-line indent"


def test_a_page_starts_with_its_own_look_not_the_last_one_of_the_page_before(
    qtbot: Any, real_font: str
) -> None:
    """Qt merges an inserted page's first block into the block it is added to: a page after
    one ending with a right-aligned signature would start right-aligned, and a page starting
    with a centred heading would lose its centring."""
    pages = {
        1: '<p>Yours ever,</p>\n<p style="text-align: right">Caroline Bingley.</p>',
        2: "<p>A plain paragraph starts this page.</p>",
        3: '<h2 style="text-align: center">IX</h2>\n<p>And the chapter goes on.</p>',
    }
    view = TextView(None, "epub")
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    view.flow.set_source(lambda n: PageContent(n, str(n), "", pages[n]), 3)
    view.show_at(2)  # pages 1 to 3 loaded: 1 before, 3 after
    assert view.flow.loaded == [1, 2, 3]
    doc = view.document()
    centre = Qt.AlignmentFlag.AlignHCenter
    right = Qt.AlignmentFlag.AlignRight
    signature = doc.findBlock(view.flow.starts[1]).previous()
    assert signature.blockFormat().alignment() & right
    assert not doc.findBlock(view.flow.starts[1]).blockFormat().alignment() & right
    assert doc.findBlock(view.flow.starts[2]).blockFormat().alignment() & centre
    assert doc.findBlock(view.flow.starts[2]).blockFormat().headingLevel() == 2
