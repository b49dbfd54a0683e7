from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from core.books.covers import cover_colour, cover_file, epub_cover_bytes
from core.errors import BookCode, BookError
from tests.core.books.epubgen import make_epub

PNG = b"\x89PNG\r\n\x1a\n" + b"cover-bytes" * 10
JPEG = b"\xff\xd8\xff\xe0" + b"other-image" * 10


def _book(tmp_path: Path, **kwargs: object) -> Path:
    return make_epub(tmp_path / "book.epub", [("One", "<p>Text.</p>")], **kwargs)  # type: ignore[arg-type]


def test_real_epubs_give_their_cover_images(books_dir: Path) -> None:
    alice = epub_cover_bytes(books_dir / "alice_in_wonderland.epub")
    kafka = epub_cover_bytes(books_dir / "metamorphosis.epub")
    assert alice is not None and alice.startswith(b"\xff\xd8\xff"), "a JPEG"
    assert kafka is not None and kafka.startswith(b"\x89PNG"), "a PNG"
    with zipfile.ZipFile(books_dir / "alice_in_wonderland.epub") as z:
        assert alice == z.read("OEBPS/7472141559003928249_cover.jpg")


@pytest.mark.parametrize(
    "name", ["test_minimal_valid.epub", "test_rich_metadata.epub", "test_no_mimetype.epub"]
)
def test_epubs_without_a_cover_give_none(books_dir: Path, name: str) -> None:
    assert epub_cover_bytes(books_dir / name) is None


def test_epub3_cover_image_property(tmp_path: Path) -> None:
    path = _book(
        tmp_path,
        extra_manifest=(
            '<item id="pic" href="images/pic.jpg" media-type="image/jpeg"/>'
            '<item id="c" href="images/front.png" media-type="image/png" properties="cover-image"/>'
        ),
        extra_files={"OEBPS/images/front.png": PNG, "OEBPS/images/pic.jpg": JPEG},
    )
    assert epub_cover_bytes(path) == PNG


def test_epub2_meta_cover_wins_over_a_name_guess(tmp_path: Path) -> None:
    opf_meta = '<meta name="cover" content="real"/>'
    path = _book(
        tmp_path,
        extra_manifest=(
            '<item id="cover-guess" href="cover.jpg" media-type="image/jpeg"/>'
            '<item id="real" href="art/front.png" media-type="image/png"/>'
        ),
        extra_files={"OEBPS/cover.jpg": JPEG, "OEBPS/art/front.png": PNG},
    )
    with zipfile.ZipFile(path) as z:
        opf = z.read("OEBPS/content.opf").decode().replace("</metadata>", opf_meta + "</metadata>")
        files = {n: z.read(n) for n in z.namelist() if n != "OEBPS/content.opf"}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("OEBPS/content.opf", opf)
        for name, data in files.items():
            z.writestr(name, data)
    assert epub_cover_bytes(path) == PNG


def test_guide_cover_page_leads_to_its_image(tmp_path: Path) -> None:
    page = '<html xmlns="http://www.w3.org/1999/xhtml"><body><div><img src="../img/c.png" alt="Cover"/></div></body></html>'
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>G</dc:title></metadata>'
        '<manifest><item id="c0" href="text/c0.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="cp" href="text/cover.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="im" href="img/c.png" media-type="image/png"/></manifest>'
        '<spine><itemref idref="c0"/></spine>'
        '<guide><reference type="cover" title="Cover" href="text/cover.xhtml"/></guide></package>'
    )
    path = _book(
        tmp_path,
        opf_override=opf,
        extra_files={
            "OEBPS/text/c0.xhtml": "<html><body><p>x</p></body></html>",
            "OEBPS/text/cover.xhtml": page,
            "OEBPS/img/c.png": PNG,
        },
    )
    assert epub_cover_bytes(path) == PNG


def test_covers_outside_the_archive_are_never_read(tmp_path: Path) -> None:
    path = _book(
        tmp_path,
        extra_manifest=(
            '<item id="c" href="../../../../etc/passwd" media-type="image/png" properties="cover-image"/>'
            '<item id="d" href="../../evil.png" media-type="image/png" properties="cover-image"/>'
            '<item id="e" href="/abs.png" media-type="image/png" properties="cover-image"/>'
        ),
        extra_files={"../evil.png": PNG, "/abs.png": PNG},
    )
    assert epub_cover_bytes(path) is None
    # the same image inside the archive is found: the refusal above is the path, not the file
    inside = make_epub(
        tmp_path / "inside.epub",
        [("One", "<p>Text.</p>")],
        extra_manifest='<item id="d" href="../evil.png" media-type="image/png" properties="cover-image"/>',
        extra_files={"evil.png": PNG},
    )
    assert epub_cover_bytes(inside) == PNG


def test_oversized_and_empty_covers_are_skipped(tmp_path: Path) -> None:
    path = _book(
        tmp_path,
        extra_manifest=(
            '<item id="big" href="big.png" media-type="image/png" properties="cover-image"/>'
            '<item id="cover-small" href="small.png" media-type="image/png"/>'
            '<item id="cover-empty" href="empty.png" media-type="image/png"/>'
        ),
        extra_files={"OEBPS/big.png": PNG * 50, "OEBPS/small.png": PNG, "OEBPS/empty.png": b""},
    )
    assert epub_cover_bytes(path, max_bytes=len(PNG) * 2) == PNG
    assert epub_cover_bytes(path, max_bytes=len(PNG) - 1) is None


def test_svg_and_missing_covers_give_none(tmp_path: Path) -> None:
    path = _book(
        tmp_path,
        extra_manifest=(
            '<item id="s" href="c.svg" media-type="image/svg+xml" properties="cover-image"/>'
            '<item id="m" href="gone.png" media-type="image/png" properties="cover-image"/>'
        ),
        extra_files={"OEBPS/c.svg": "<svg/>"},
    )
    assert epub_cover_bytes(path) is None


def test_hostile_package_file_gives_no_cover(tmp_path: Path) -> None:
    opf = '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaa">]><package>&a;</package>'
    path = _book(tmp_path, opf_override=opf)
    assert epub_cover_bytes(path) is None


def test_not_an_epub_raises_a_sentence(books_dir: Path) -> None:
    with pytest.raises(BookError) as caught:
        epub_cover_bytes(books_dir / "test_corrupted.epub")
    assert caught.value.code == BookCode.CORRUPT
    assert "test_corrupted.epub is damaged" in str(caught.value)


def test_cover_file_stays_in_the_covers_folder(tmp_path: Path) -> None:
    sha = hashlib.sha256(b"x").hexdigest()
    assert cover_file(tmp_path, sha) == tmp_path / "covers" / f"{sha}.2.png"
    for bad in ("../../etc/passwd", sha.upper(), sha[:-1], f"{sha}/x", ""):
        with pytest.raises(ValueError, match="not a SHA-256"):
            cover_file(tmp_path, bad)


def test_cover_colour_is_stable_and_differs_by_title() -> None:
    colours = {cover_colour(t) for t in ("Emma", "Dracula", "Ulysses", "Middlemarch", "Walden")}
    assert len(colours) >= 4
    assert cover_colour("Emma") == cover_colour("  emma ") == (cover_colour("EMMA"))
    for r, g, b in colours:
        assert all(0 <= c <= 255 for c in (r, g, b))
        assert max(r, g, b) <= 200, "dark enough for white title text"
