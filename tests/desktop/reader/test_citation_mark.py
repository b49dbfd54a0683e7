"""A passage reached from a citation (issue 43, item 7): marked by more than colour (a dashed
line under it as well as its tint) and the caret at its start, so a screen reader reads the
passage rather than the top of the page."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QTextCharFormat

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import text_view


def test_a_cited_passage_is_underlined_and_holds_the_caret(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 2)
    view = text_view(reader)
    quote = " ".join(library.page(book.id, 12).text.split()[120:128])
    reader.go_to_page(12, mark=quote)
    start, end = view.marks.mark_position() or (0, 0)
    assert end > start and view.mark_visible()
    assert view.textCursor().position() == start  # not the top of the page
    assert view.textCursor().block().text().find(quote.split()[0]) >= 0
    [mark] = [s for s in view.extraSelections() if s.cursor.selectionStart() == start]
    assert mark.format.underlineStyle() == QTextCharFormat.UnderlineStyle.DashUnderline
    top = view.top_position()
    assert top != view.flow.page_offset(start), "the passage is further down than the top line"
