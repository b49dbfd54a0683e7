"""Covers cannot blow up memory or pull in local files (issue 27, items 1 and 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from core.books.covers import epub_cover_bytes, image_kind
from desktop.library.covers import (
    COVER_SIZE,
    RENDER_PIXELS,
    CoverJob,
    decode_image,
    make_cover,
    pdf_first_page,
)
from tests.core.books.epubgen import make_epub
from tests.support.pdfgen import make_text_pdf


def _pdf_with_page(path: Path, box: str) -> Path:
    """A one-page PDF whose page is ``box`` points ("W H", seven characters so the cross
    references stay right)."""
    assert len(box) == len("595 842")
    make_text_pdf(path, ["A thin page."])
    path.write_bytes(path.read_bytes().replace(b"595 842", box.encode()))
    return path


@pytest.mark.parametrize("box", ["20 2000", "1 14400", "14400 1"])
def test_a_pdf_cover_is_never_drawn_larger_than_the_cap(
    qapp: object, tmp_path: Path, box: str
) -> None:
    pdf = _pdf_with_page(tmp_path / "thin.pdf", box)
    page = pdf_first_page(pdf)
    assert page is not None
    assert page.width() * page.height() <= RENDER_PIXELS * 1.01
    cover = make_cover(CoverJob("a" * 64, "pdf", str(pdf), "Thin", ""))
    assert cover.size() == COVER_SIZE


def test_a_long_thin_cover_image_is_decoded_small(tmp_path: Path) -> None:
    strip = QImage(20, 20000, QImage.Format.Format_RGB32)  # 400,000 px: under the refusal cap
    strip.fill(QColor("green"))
    path = tmp_path / "strip.jpg"
    assert strip.save(str(path))
    decoded = decode_image(path.read_bytes(), QSize(180, 270))
    assert decoded is not None
    assert decoded.width() * decoded.height() <= RENDER_PIXELS * 1.01


SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
    b'width="600" height="900"><rect width="600" height="900" fill="red"/>'
    b'<image xlink:href="file:///etc/hostname" width="600" height="900"/></svg>'
)


def test_an_svg_labelled_png_is_not_a_cover(qapp: object, tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "book.epub",
        [("One", "<p>Text.</p>")],
        extra_manifest=(
            '<item id="c" href="images/front.png" media-type="image/png" properties="cover-image"/>'
        ),
        extra_files={"OEBPS/images/front.png": SVG},
    )
    assert image_kind(SVG) is None
    assert epub_cover_bytes(path) is None
    assert decode_image(SVG) is None, "QtSvg never draws a cover"
    cover = make_cover(CoverJob("b" * 64, "epub", str(path), "Svg Book", "Someone"))
    assert cover.size() == COVER_SIZE  # a generated one


def test_real_raster_formats_are_recognised_by_their_bytes() -> None:
    assert image_kind(b"\xff\xd8\xff\xe0....") == "jpeg"
    assert image_kind(b"\x89PNG\r\n\x1a\n....") == "png"
    assert image_kind(b"GIF89a....") == "gif"
    assert image_kind(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "webp"
    assert image_kind(b"<html>") is None
