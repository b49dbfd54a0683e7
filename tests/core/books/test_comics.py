"""Comics and picture books: a CBZ and a pre-paginated EPUB open as picture pages, in order,
with their direction; the text reader's "no readable text" refusal is gone for them."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from core.books.comics import image_of, is_image_page
from core.books.importer import import_book
from core.books.parse import parse_book
from core.errors import BookCode, BookError
from core.paths import resolve_paths
from core.store.library import Library
from tests.support.comics import make_cbz, make_fixed_layout_epub, page_png


@pytest.fixture
def library() -> Library:
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()


def test_cbz_pages_in_natural_order_with_comicinfo(tmp_path: Path) -> None:
    book = parse_book(make_cbz(tmp_path / "c.cbz", 12, manga=True, title="Night Train"))
    assert book.format == "cbz" and book.title == "Night Train" and book.author == "Test Writer"
    images = [image_of(p.html or "") for p in book.pages]
    assert [name for name, _ in images][:3] == [
        "pages/page1.png",
        "pages/page2.png",
        "pages/page3.png",
    ]
    assert images[9][0] == "pages/page10.png", "page10 after page9, not after page1"
    assert all(rtl for _, rtl in images), "Manga=YesAndRightToLeft turns right to left"
    assert all(p.text == "" for p in book.pages)


def test_cbz_without_comicinfo_reads_left_to_right(tmp_path: Path) -> None:
    book = parse_book(make_cbz(tmp_path / "plain_comic.cbz", 3))
    assert book.title == "plain comic"
    assert not any(image_of(p.html or "")[1] for p in book.pages)


def test_cbz_without_pictures_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.cbz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "no pictures")
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.EMPTY and "has no pictures" in err.value.message


def test_pre_paginated_epub_is_picture_pages_with_its_direction(tmp_path: Path) -> None:
    book = parse_book(make_fixed_layout_epub(tmp_path / "manga.epub", 5, rtl=True))
    assert book.format == "epub" and book.title == "A Comic" and len(book.pages) == 5
    assert all(is_image_page(p.html) for p in book.pages)
    assert image_of(book.pages[4].html or "") == ("OEBPS/images/p5.png", True)


def test_image_only_epub_opens_instead_of_being_refused(tmp_path: Path) -> None:
    """Not marked pre-paginated, no text at all: the text reader finds nothing, and the book
    opens as pictures."""
    path = make_fixed_layout_epub(tmp_path / "pictures.epub", 3)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp_path / "plain.epub", "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".opf"):
                data = data.replace(b'<meta property="rendition:layout">pre-paginated</meta>', b"")
            out.writestr(info, data)
    book = parse_book(tmp_path / "plain.epub")
    assert len(book.pages) == 3 and all(is_image_page(p.html) for p in book.pages)
    assert image_of(book.pages[0].html or "") == ("OEBPS/images/p1.png", False)


def test_comic_imports_into_the_library(library: Library, tmp_path: Path) -> None:
    book = import_book(library, make_cbz(tmp_path / "c.cbz", 4, manga=True)).book
    assert book.format == "cbz" and book.page_count == 4
    assert is_image_page(library.page(book.id, 2).html)


def test_png_helper_is_a_real_png() -> None:
    assert page_png(0).startswith(b"\x89PNG")


def test_the_cover_of_a_comic_is_its_first_picture(tmp_path: Path) -> None:
    from core.books.comics import cbz_cover_bytes

    assert cbz_cover_bytes(make_cbz(tmp_path / "c.cbz", 3)) == page_png(0)
    assert cbz_cover_bytes(tmp_path / "missing.cbz") is None


def test_a_drm_protected_comic_is_refused_as_such(tmp_path: Path) -> None:
    path = make_fixed_layout_epub(tmp_path / "locked.epub", 2, rtl=True)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(
            "META-INF/encryption.xml",
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
            '<enc:CipherData><enc:CipherReference URI="OEBPS/images/p1.png"/></enc:CipherData>'
            "</enc:EncryptedData></encryption>",
        )
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.DRM
