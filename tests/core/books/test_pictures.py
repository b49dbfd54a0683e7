"""The "N of M pages are pictures without text" notice (issue 45): a book's cover or title
page drawn as a picture is its face, not a page whose words are lost, so a Standard Ebooks
novel (its title page is an SVG of lettering) gets no notice; a real picture page still
counts, and a book of pictures is still one."""

from __future__ import annotations

from pathlib import Path

from core.books.importer import import_book
from core.books.pictures import notice, pages_without_text
from core.store.library import Library
from tests.core.books.epubgen import make_epub

PNG = (  # 1 × 1 pixel
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)


def test_a_standard_ebooks_title_page_is_not_a_picture_page(
    library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "a_christmas_carol.epub").book
    texts = library.page_texts(book.id)
    assert [n for n, t in texts if not t.strip()] == [1]  # its SVG title page
    without, total = pages_without_text(library, book.id)
    assert without == 0 and total == len(texts) - 1
    assert notice(without, total, "epub") == ""


def test_a_picture_page_inside_the_book_still_counts(library: Library, tmp_path: Path) -> None:
    chapters = [
        ("", '<p><img src="cover.png" alt=""/></p>'),  # (an empty title: no heading)
        ("One", "<p>" + "Words of the first chapter. " * 40 + "</p>"),
        ("", '<p><img src="plate.png" alt=""/></p>'),
        ("Two", "<p>" + "Words of the second chapter. " * 40 + "</p>"),
    ]
    files = {"OEBPS/cover.png": PNG, "OEBPS/plate.png": PNG}
    manifest = (
        '<item id="i1" href="cover.png" media-type="image/png"/>'
        '<item id="i2" href="plate.png" media-type="image/png"/>'
    )
    path = make_epub(tmp_path / "b.epub", chapters, extra_files=files, extra_manifest=manifest)
    book = import_book(library, path).book
    texts = library.page_texts(book.id)
    empty = [n for n, t in texts if not t.strip()]
    assert len(empty) == 2  # the cover (listed in the contents, so kept) and the plate
    without, total = pages_without_text(library, book.id)
    assert (without, total) == (1, len(texts) - 1)
    assert notice(without, total, "epub").startswith("1 of ")


def test_a_book_of_pictures_keeps_its_cover_among_them(library: Library, tmp_path: Path) -> None:
    chapters = [("", f'<p><img src="{name}.png" alt=""/></p>') for name in ("cover", "p1", "p2")]
    files = {f"OEBPS/{name}.png": PNG for name in ("cover", "p1", "p2")}
    manifest = "".join(
        f'<item id="{n}" href="{n}.png" media-type="image/png"/>' for n in ("cover", "p1", "p2")
    )
    path = make_epub(tmp_path / "c.epub", chapters, extra_files=files, extra_manifest=manifest)
    book = import_book(library, path).book
    without, total = pages_without_text(library, book.id)
    assert without == total > 0
