"""Reading a book again keeps the text recognised on its picture pages (issue 29): the text
comes back from ``ocr_text`` without running tesseract again, only for the same file and
only on pages that still have no text of their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books import ocr
from core.books.importer import import_book, reimport_book
from core.paths import resolve_paths
from core.search.fts import BookSearch
from core.store.library import Library
from tests.support.imagepdf import scan_of
from tests.support.pdfgen import make_text_pdf


@pytest.fixture
def library() -> Iterator[Library]:
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()


def _recognised(library: Library, tmp_path: Path) -> int:
    """A scanned two-page PDF whose pages were recognised (by a given reader: what tesseract
    would return), as the window's Recognise text does."""
    text = make_text_pdf(
        tmp_path / "text.pdf", ["The lighthouse keeper counted ships.", "Gulls over the harbour."]
    )
    book = import_book(library, scan_of(text, tmp_path / "scan.pdf")).book
    said = iter(["The lighthouse keeper counted ships.", "Gulls over the harbour."])
    ocr.recognise_book(library, book.id, recognise=lambda image: next(said))
    return book.id


def _texts(library: Library, book_id: int) -> list[str]:
    return [t for _, t in library.page_texts(book_id)]


def test_reading_again_keeps_the_recognised_text(library: Library, tmp_path: Path) -> None:
    book_id = _recognised(library, tmp_path)
    highlight = library.add_highlight(book_id, 2, "Gulls")
    before = _texts(library, book_id)
    assert before == ["The lighthouse keeper counted ships.", "Gulls over the harbour."]
    book = reimport_book(library, book_id)
    assert _texts(library, book.id) == before
    hits = BookSearch(library.db).search_book(book_id, "harbour gulls", limit=3, hybrid=False)
    assert hits and "harbour" in hits[0].text  # chunks and index rebuilt with the kept text
    assert not library.lost_anchors(book_id)  # the highlight's words were found again
    assert [h.id for h in library.list_highlights(book_id)] == [highlight.id]
    reimport_book(library, book_id)  # and again: still there
    assert _texts(library, book_id) == before


def test_another_file_or_a_page_with_its_own_text_is_not_overwritten(
    library: Library, tmp_path: Path
) -> None:
    book_id = _recognised(library, tmp_path)
    library.db.execute_sql("UPDATE ocr_text SET sha256 = 'another file' WHERE number = 1")
    reimport_book(library, book_id)
    assert _texts(library, book_id) == ["", "Gulls over the harbour."]  # page 1 not kept

    (tmp_path / "typed").mkdir()
    typed = import_book(
        library, make_text_pdf(tmp_path / "typed" / "t.pdf", ["Its own words here."])
    ).book
    library.db.execute_sql(
        "INSERT INTO ocr_text (book_id, number, sha256, text) VALUES (?, 1, ?, 'Misread')",
        (typed.id, typed.sha256),
    )
    reimport_book(library, typed.id)
    assert "Its own words here" in _texts(library, typed.id)[0]


def test_the_recognised_text_goes_with_its_book(library: Library, tmp_path: Path) -> None:
    book_id = _recognised(library, tmp_path)
    count = "SELECT COUNT(*) FROM ocr_text WHERE book_id = ?"
    assert library.db.execute_sql(count, (book_id,)).fetchone()[0] == 2
    library.delete_book(book_id)
    assert library.db.execute_sql(count, (book_id,)).fetchone()[0] == 0
