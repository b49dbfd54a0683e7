"""The PDF view (pdf_view.py): screens with overlap at any zoom, centred marks, Back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.pdf_view import PdfView
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import press
from tests.support.pdfgen import make_text_pdf


def test_pdf_page_down_keeps_a_line_of_overlap_at_any_zoom(
    reader: Reader, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 6)]
    pdf = make_text_pdf(tmp_path / "long.pdf", texts)
    book = import_book(library, pdf).book
    reader.open_book(book, 1)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(3.0)
    view.go_to_page(1)
    bar = view.verticalScrollBar()
    height = view.viewport().height()
    pages_seen = []
    previous = bar.value()
    for _ in range(12):
        press(view, Qt.Key.Key_PageDown)
        value = bar.value()
        assert 0 < value - previous <= height - view.overlap() + 1, "no gap between screens"
        previous = value
        pages_seen.append(reader.page)
    assert pages_seen[-1] >= 2 and pages_seen == sorted(pages_seen)
    press(view, Qt.Key.Key_PageUp)
    assert bar.value() < previous


def test_pdf_citation_mark_is_centred(reader: Reader, library: Library, tmp_path: Path) -> None:
    texts = [
        f"Page {n}. " + "Filler words here. " * 150 + f"Closing words {n}." for n in range(1, 4)
    ]
    book = import_book(library, make_text_pdf(tmp_path / "c.pdf", texts)).book
    reader.open_book(book, 1)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(3.0)
    reader.go_to_page(2, mark="Closing words 2")
    assert reader.page == 2 and view.mark_visible()


def test_pdf_back_returns_to_the_same_place_on_the_page(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 8)]
    book = import_book(library, make_text_pdf(tmp_path / "b.pdf", texts)).book
    reader.open_book(book, 2)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(2.0)
    press(view, Qt.Key.Key_PageDown)
    here = view.position()
    assert here[0] == 2 and here[1] > 50
    reader.go_to_page(6)
    assert reader.page == 6
    reader.go_back()
    assert view.position() == here and reader.page == 2
