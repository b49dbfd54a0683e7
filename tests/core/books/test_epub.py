from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from core.books.epub import parse_epub, read_resource
from core.books.limits import Limits
from core.books.parse import parse_book
from core.errors import BookCode, BookError
from tests.core.books.epubgen import make_epub, paragraphs


def test_alice_metadata_toc_and_text(books_dir: Path) -> None:
    book = parse_book(books_dir / "alice_in_wonderland.epub")
    assert book.title == "Alice's Adventures in Wonderland"
    assert book.author == "Lewis Carroll"
    assert book.language == "en"
    titles = [t.title for t in book.toc]
    assert "CHAPTER I. Down the Rabbit-Hole" in titles
    assert "CHAPTER XII. Alice’s Evidence" in titles
    pages = [t.page for t in book.toc]
    assert pages == sorted(pages), "toc entries follow the spine order"
    chapter_one = next(t for t in book.toc if t.title.startswith("CHAPTER I."))
    assert "Rabbit-Hole" in book.pages[chapter_one.page - 1].text
    assert any("Cheshire" in p.text for p in book.pages)
    assert "\n\n" in book.pages[5].text, "paragraph breaks are kept"


def test_metamorphosis_parts(books_dir: Path) -> None:
    book = parse_book(books_dir / "metamorphosis.epub")
    assert book.author == "Franz Kafka"
    assert [t.title for t in book.toc if t.title in ("I", "II", "III")] == ["I", "II", "III"]
    assert "Gregor Samsa" in book.pages[book.toc[2].page - 1].text


@pytest.mark.parametrize(
    "name", ["test_minimal_valid.epub", "test_rich_metadata.epub", "test_no_mimetype.epub"]
)
def test_small_fixtures_parse(books_dir: Path, name: str) -> None:
    book = parse_book(books_dir / name)
    assert book.title
    assert book.pages and book.pages[0].text.strip()


def test_corrupted_and_empty(books_dir: Path) -> None:
    with pytest.raises(BookError) as err:
        parse_book(books_dir / "test_corrupted.epub")
    assert err.value.code == BookCode.CORRUPT
    assert "test_corrupted.epub" in err.value.message
    with pytest.raises(BookError) as err:
        parse_book(books_dir / "test_empty.epub")
    assert err.value.code == BookCode.EMPTY
    assert "test_empty.epub" in err.value.message


def test_nav_toc_preferred_and_ncx_fallback(tmp_path: Path) -> None:
    chapters = [("One", paragraphs(2)), ("Two", paragraphs(2))]
    with_nav = parse_epub(make_epub(tmp_path / "nav.epub", chapters, nav=True, ncx=True))
    assert [t.title for t in with_nav.toc] == ["Nav One", "Nav Two"]
    ncx_only = parse_epub(make_epub(tmp_path / "ncx.epub", chapters, nav=False, ncx=True))
    assert [t.title for t in ncx_only.toc] == ["NCX One", "NCX Two"]
    assert [t.chapter for t in ncx_only.toc] == [0, 1]


def test_non_linear_kept_after_the_main_flow_and_image_only_cover_skipped(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "b.epub",
        [("Notes", "<p>Secret endnote text</p>"), ("Story", paragraphs(3))],
        spine_attrs={0: 'linear="no"'},
        extra_manifest='<item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="img" href="cover.png" media-type="image/png"/>',
        extra_spine_first='<itemref idref="cover"/>',
        extra_files={
            "OEBPS/cover.xhtml": '<html xmlns="http://www.w3.org/1999/xhtml"><body><img src="cover.png"/></body></html>',
            "OEBPS/cover.png": b"\x89PNG\r\n\x1a\nfake",
        },
    )
    book = parse_book(path)
    # linear="no" is kept (its text is the book's), after the main flow
    assert [c.title for c in book.chapters] == ["Story", "Notes"]
    assert "Secret endnote" in book.pages[-1].text
    assert not any("[Illustration" in p.text for p in book.pages)


def test_images_resolve_inside_book_and_remote_dropped(tmp_path: Path) -> None:
    body = '<p>Look <img src="pics/a.png" alt="A"/> and <img src="http://evil.example/x.png"/></p><script>alert(1)</script>'
    path = make_epub(
        tmp_path / "img.epub",
        [("Pics", body)],
        extra_files={"OEBPS/pics/a.png": b"PNGDATA"},
        extra_manifest='<item id="a" href="pics/a.png" media-type="image/png"/>',
    )
    book = parse_book(path)
    html = book.pages[0].html or ""
    assert 'src="book:/OEBPS/pics/a.png"' in html
    assert "evil.example" not in html
    assert "script" not in html and "alert" not in book.pages[0].text
    assert read_resource(path, "/OEBPS/pics/a.png") == b"PNGDATA"
    with pytest.raises(BookError):
        read_resource(path, "../../etc/passwd")
    with pytest.raises(BookError):
        read_resource(path, "OEBPS/missing.png")


def test_drm_encrypted_content_is_refused(tmp_path: Path) -> None:
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/c0.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>'
    )
    path = make_epub(
        tmp_path / "drm.epub",
        [("One", paragraphs(2))],
        extra_files={"META-INF/encryption.xml": enc},
    )
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.DRM
    assert "DRM-protected" in err.value.message


def test_font_obfuscation_only_is_accepted(tmp_path: Path) -> None:
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData></enc:EncryptedData></encryption>'
    )
    path = make_epub(
        tmp_path / "font.epub",
        [("One", paragraphs(2))],
        extra_files={"META-INF/encryption.xml": enc},
    )
    assert parse_book(path).pages


def test_zip_bomb_is_refused_before_unpacking(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "bomb.epub",
        [("One", paragraphs(2))],
        extra_files={"OEBPS/big.txt": b"0" * (20 * 1024 * 1024)},
    )
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.TOO_LARGE
    assert "bomb.epub" in err.value.message
    with pytest.raises(BookError) as err:
        parse_book(
            path, limits=Limits(max_uncompressed_bytes=1024 * 1024, max_compression_ratio=10**6)
        )
    assert err.value.code == BookCode.TOO_LARGE


def test_entries_escaping_the_archive_are_never_read(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "evil.epub", [("One", '<p>x</p><img src="../../../etc/passwd"/>')])
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("../evil.xhtml", "<p>outside</p>")
        z.writestr("/abs.xhtml", "<p>absolute</p>")
    book = parse_book(path)
    assert all("outside" not in p.text and "absolute" not in p.text for p in book.pages)
    assert "passwd" not in (book.pages[0].html or "")


def test_billion_laughs_opf_refused(tmp_path: Path) -> None:
    opf = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        '<package xmlns="http://www.idpf.org/2007/opf"><metadata/><manifest/><spine/></package>'
    )
    path = make_epub(tmp_path / "lol.epub", [("One", paragraphs(1))], opf_override=opf)
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.CORRUPT


def test_epub_without_text(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "blank.epub", [("", "")])
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.EMPTY


def test_too_long_paragraph(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "long.epub", [("One", "<p>" + "word " * 5000 + "</p>")])
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_paragraph_chars=10_000))
    assert err.value.code == BookCode.TOO_LARGE
