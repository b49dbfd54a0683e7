"""Text recognition of scanned PDF pages with the system's tesseract (skipped where it is
not installed: Margin never bundles it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books import ocr
from core.books.importer import import_book
from core.errors import BookCode, BookError
from core.paths import resolve_paths
from core.progress import CancelToken
from core.store.library import Library
from tests.support.imagepdf import scan_of
from tests.support.pdfgen import make_text_pdf

needs_tesseract = pytest.mark.skipif(not ocr.available(), reason="tesseract is not installed")


@pytest.fixture
def library() -> Library:
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()


def _scanned_book(library: Library, tmp_path: Path, last: str = "quiet cranes") -> int:
    text = make_text_pdf(
        tmp_path / "text.pdf",
        [
            "The lighthouse keeper counted forty ships before dawn.",
            f"A second page about the harbour and its {last}.",
        ],
    )
    book = import_book(library, scan_of(text, tmp_path / "scan.pdf")).book
    assert [t for _, t in library.page_texts(book.id)] == ["", ""]
    return book.id


@needs_tesseract
@pytest.mark.timeout(600)  # tesseract takes seconds a page, more on a busy machine
def test_recognised_text_is_searchable_and_stays_with_the_book(
    library: Library, tmp_path: Path
) -> None:
    from core.search.fts import BookSearch

    book_id = _scanned_book(library, tmp_path)
    seen: list[float] = []
    book, pages = ocr.recognise_book(
        library, book_id, progress=lambda f, m: seen.append(f), dpi=150
    )
    assert pages == 2 and book.page_count == 2 and seen[-1] == 1.0
    first = library.page(book_id, 1).text.lower()
    assert "lighthouse keeper" in first and "forty ships" in first
    hits = BookSearch(library.db).search_book(book_id, "harbour cranes", limit=3, hybrid=False)
    assert hits and hits[0].end_page == 2 and "harbour" in hits[0].text


def test_recognition_through_a_given_reader_and_stop(library: Library, tmp_path: Path) -> None:
    """The page pictures reach the recogniser as PGM images; a Stop changes nothing."""
    book_id = _scanned_book(library, tmp_path)
    images: list[bytes] = []

    def read(image: bytes) -> str:
        images.append(image)
        return f"Words of page {len(images)}."

    ocr.recognise_book(library, book_id, recognise=read)
    assert len(images) == 2 and all(i.startswith(b"P5\n") for i in images)
    assert library.page(book_id, 2).text == "Words of page 2."
    token = CancelToken()

    def stop(image: bytes) -> str:
        token.cancel()
        return "never saved"

    (tmp_path / "other").mkdir()
    other = _scanned_book(library, tmp_path / "other", last="gulls")
    with pytest.raises(BookError) as err:
        ocr.recognise_book(library, other, recognise=stop, cancel=token)
    assert err.value.code == BookCode.CANCELLED
    assert [t for _, t in library.page_texts(other)] == ["", ""]


def test_without_tesseract_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert not ocr.available()
    with pytest.raises(BookError) as err:
        ocr.recognise_image(b"P5\n1 1\n255\n\x00")
    assert "needs the tesseract program" in err.value.message


def test_a_huge_picture_page_is_drawn_within_the_pixel_budget(tmp_path: Path) -> None:
    """Issue 46 item 9: a 100-inch page drawn at 300 dpi was 900 megapixels (3.56 GB in the
    window's process); it is drawn for recognition within ``OCR_PIXELS``."""
    import time

    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    pdf.new_page(7200, 7200)  # 100 x 100 inches
    path = tmp_path / "huge.pdf"
    pdf.save(path)
    pdf.close()
    assert ocr.render_scale(7200, 7200) < ocr.DPI / 72
    assert ocr.render_scale(612, 792) == ocr.DPI / 72  # a letter page: full resolution
    doc = pdfium.PdfDocument(path)
    started = time.perf_counter()
    try:
        image = ocr._page_image(doc, 0)
    finally:
        doc.close()
    width, height = (int(v) for v in image.split(b"\n")[1].split())
    assert width * height <= ocr.OCR_PIXELS
    assert width > 5000  # still sharp enough to read
    assert time.perf_counter() - started < 10
