"""Note references in the page are superscript links to their note, and the note's back
link returns (issue 33): the stored page HTML is what the window shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl

from core.books.importer import import_book
from core.store.library import Library
from tests.core.books.test_book_text import INTRO, NOTES, _se_epub
from tests.desktop.reader.conftest import open_reader


def test_clicking_a_note_reference_opens_its_note_and_back_returns(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    long_intro = INTRO + "".join(
        f"<p>{'Filler sentence of the introduction. ' * 50}</p>" for _ in range(6)
    )
    path = _se_epub(tmp_path / "smith.epub", [("Introduction", long_intro), ("Endnotes", NOTES)])
    book = import_book(library, path).book
    reader, view = open_reader(library, qtbot, book)
    page = library.page(book.id, 1)
    assert page.html is not None and '<sup><a class="noteref" href="page:' in page.html
    notes_page = next(
        p.number for p in library.pages(book.id, 1, book.page_count) if "[1] John Rae" in p.text
    )
    assert notes_page > 1
    view.anchorClicked.emit(QUrl(f"page:{notes_page}"))  # what a click on the "1" sends
    qtbot.waitUntil(lambda: reader.page == notes_page)
    view.anchorClicked.emit(QUrl("page:0"))  # a link whose note is not in the book: nothing
    assert reader.page == notes_page
    reader.go_back()
    qtbot.waitUntil(lambda: reader.page == 1)
