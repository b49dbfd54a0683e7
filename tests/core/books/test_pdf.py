from __future__ import annotations

from pathlib import Path

import pytest

from core.books import pdf
from core.books.limits import Limits
from core.books.parse import parse_book
from core.books.pdf import PARALLEL_FROM_PAGES, clean_page_text
from core.errors import BookCode, BookError
from core.progress import CancelToken, no_progress
from tests.support.pdfgen import book_pages, make_text_pdf


def test_real_pages_and_outline(pdf_dir: Path) -> None:
    book = parse_book(pdf_dir / "pdflatex-outline.pdf")
    assert len(book.pages) == 4
    assert [p.number for p in book.pages] == [1, 2, 3, 4]
    assert [(t.title, t.page) for t in book.toc[:3]] == [("Foo", 2), ("Bar", 2), ("Baz", 2)]
    assert "Hello, here is some text" in book.pages[1].text


def test_mistitled_outline_kept_as_the_pdf_says(pdf_dir: Path) -> None:
    book = parse_book(pdf_dir / "mistitled_outlines_example.pdf")
    assert [t.title for t in book.toc[:2]] == ["First", "Second"]


def test_multicolumn_and_arabic_text(pdf_dir: Path) -> None:
    book = parse_book(pdf_dir / "multicolumn.pdf")
    assert len(book.pages) == 3
    assert "Two-Column Document" in book.pages[0].text
    assert "\x02" not in book.pages[0].text
    arabic = parse_book(pdf_dir / "habibi.pdf")
    assert "habibi" in arabic.pages[0].text
    assert any("\u0600" <= ch <= "\u06ff" for ch in arabic.pages[0].text)
    assert not any(ord(ch) < 32 and ch != "\n" for ch in arabic.pages[0].text)


def test_password_pdf_asks_for_its_password(pdf_dir: Path) -> None:
    with pytest.raises(BookError) as err:
        parse_book(pdf_dir / "libreoffice-writer-password.pdf")
    assert err.value.code == BookCode.PASSWORD
    assert "protected by a password" in err.value.message
    assert "libreoffice-writer-password.pdf" in err.value.message


def test_password_pdf_opens_with_its_password(pdf_dir: Path) -> None:
    book = parse_book(pdf_dir / "libreoffice-writer-password.pdf", password="openpassword")
    assert book.pages[0].text.startswith("Lorem ipsum dolor sit amet")


def test_wrong_password_is_said_plainly(pdf_dir: Path) -> None:
    with pytest.raises(BookError) as err:
        parse_book(pdf_dir / "libreoffice-writer-password.pdf", password="not-it")
    assert err.value.code == BookCode.WRONG_PASSWORD
    assert "password for libreoffice-writer-password.pdf is wrong" in err.value.message
    assert "not-it" not in str(err.value)


def test_scanned_pdf_opens_with_pages_without_text(pdf_dir: Path, tmp_path: Path) -> None:
    from tests.support.imagepdf import make_image_pdf

    real = parse_book(pdf_dir / "imagemagick-images.pdf")
    assert len(real.pages) == 6 and all(p.text == "" for p in real.pages)
    made = parse_book(make_image_pdf(tmp_path / "scan.pdf", 5))
    assert [p.label for p in made.pages] == ["1", "2", "3", "4", "5"]
    assert made.extra["pages_without_text"] == "5"


def test_a_page_with_an_endless_paragraph_is_cut_not_refused(tmp_path: Path) -> None:
    path = make_text_pdf(tmp_path / "long.pdf", ["word " * 400, "Second page."])
    book = parse_book(path, limits=Limits(max_paragraph_chars=100))
    assert len(book.pages) == 2
    assert max(len(p) for p in book.pages[0].text.split("\n\n")) <= 100
    assert book.pages[1].text == "Second page."


def test_zero_page_and_garbage_pdf(tmp_path: Path) -> None:
    zero = make_text_pdf(tmp_path / "zero.pdf", [])
    with pytest.raises(BookError) as err:
        parse_book(zero)
    assert err.value.code in (BookCode.EMPTY, BookCode.CORRUPT)
    assert "zero.pdf" in err.value.message
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    with pytest.raises(BookError) as err:
        parse_book(junk)
    assert err.value.code == BookCode.CORRUPT


def test_long_pdf_uses_worker_and_keeps_page_order(tmp_path: Path, books_dir: Path) -> None:
    texts = [
        f"Page marker {i} unique{i}. " + t
        for i, t in enumerate(
            book_pages(PARALLEL_FROM_PAGES + 20, books_dir / "alice_in_wonderland.txt", 1500)
        )
    ]
    path = make_text_pdf(tmp_path / "long.pdf", texts, title="Long Book")
    seen: list[float] = []
    book = parse_book(path, progress=lambda f, m: seen.append(f))
    assert book.title == "Long Book"
    assert len(book.pages) == len(texts)
    for i, page in enumerate(book.pages):
        assert f"unique{i}." in page.text, f"page {i + 1} holds its own text"
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)


def test_one_or_two_workers_give_the_same_pages(tmp_path: Path, books_dir: Path) -> None:
    texts = [
        f"Page marker {i} unique{i}. " + t
        for i, t in enumerate(book_pages(90, books_dir / "alice_in_wonderland.txt", 1200))
    ]
    path = make_text_pdf(tmp_path / "two.pdf", texts)
    pdf.shutdown_workers()
    one = pdf._extract_all(path, len(texts), no_progress, None, Limits(), use_worker=False)
    assert 1 not in pdf._pools, "no second worker when the split does not pay"
    two = pdf._extract_all(path, len(texts), no_progress, None, Limits(), use_worker=True)
    assert 1 in pdf._pools
    assert one == two
    assert [f"unique{i}." in t for i, t in enumerate(one)] == [True] * len(texts)
    # the same worker reads the next book after this one (its document was closed)
    again = pdf._extract_all(path, len(texts), no_progress, None, Limits(), use_worker=False)
    assert again == one


def test_warm_workers_start_ahead(pdf_dir: Path) -> None:
    pdf.shutdown_workers()
    pdf.warm_workers()
    assert 0 in pdf._pools
    book = parse_book(pdf_dir / "multicolumn.pdf")
    assert "Two-Column Document" in book.pages[0].text


def test_cancel_during_pdf_extraction(tmp_path: Path, books_dir: Path) -> None:
    path = make_text_pdf(tmp_path / "c.pdf", book_pages(80, books_dir / "alice_in_wonderland.txt"))
    token = CancelToken()

    def progress(fraction: float, message: str) -> None:
        if fraction > 0.1:
            token.cancel()

    with pytest.raises(BookError) as err:
        parse_book(path, progress=progress, cancel=token)
    assert err.value.code == BookCode.CANCELLED


def test_page_limit(tmp_path: Path) -> None:
    path = make_text_pdf(tmp_path / "p.pdf", ["text here"] * 5)
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_pages=3))
    assert err.value.code == BookCode.TOO_LARGE
    assert "5 pages" in err.value.message


def test_clean_page_text_paragraphs_and_controls() -> None:
    raw = "A long line of text that goes on and on and on.\r\nShort end.\r\nNext para starts here and is long too.\x02\r\n"
    text = clean_page_text(raw)
    assert "\r" not in text and "\x02" not in text
    assert "Short end.\n\nNext para" in text


def test_a_worker_opens_a_document_once_for_all_its_pieces(tmp_path: Path, pdf_dir: Path) -> None:
    """Run here in-process: the pieces of one book reuse the open document (opening a long
    PDF costs more than a few pages of text); another file, or the same file changed, is
    opened anew; closing forgets it."""
    import shutil

    path = tmp_path / "book.pdf"
    shutil.copy(pdf_dir / "pdflatex-4-pages.pdf", path)
    pdf._worker_close()
    try:
        first = pdf._worker_extract(str(path), 0, 2)
        doc = pdf._worker_doc
        assert doc is not None
        second = pdf._worker_extract(str(path), 2, 4)
        assert pdf._worker_doc is doc, "the second piece used the open document"
        assert len(first) == len(second) == 2 and all(first + second)
        other = pdf._worker_extract(str(pdf_dir / "multicolumn.pdf"), 0, 1)
        assert pdf._worker_doc is not doc and "Two-Column Document" in other[0]
        pdf._worker_extract(str(path), 0, 1)
        reopened = pdf._worker_doc
        path.write_bytes((pdf_dir / "multicolumn.pdf").read_bytes())  # replaced in place
        assert pdf._worker_extract(str(path), 0, 1) == other
        assert pdf._worker_doc is not reopened
    finally:
        pdf._worker_close()
    assert pdf._worker_doc is None
