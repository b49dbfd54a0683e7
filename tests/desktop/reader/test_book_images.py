"""Pictures a page shows (issue 29, item 3): SVG drawn at a bounded size, data: URLs decoded,
and a placeholder naming a format Qt cannot read here (AVIF, JPEG XL)."""

from __future__ import annotations

import base64
import re
from typing import Any

from PySide6.QtCore import QUrl

from desktop.reader.book_images import MAX_SIDE, data_url_bytes, decode_image, placeholder
from desktop.reader.links import data_image
from tests.desktop.reader.conftest import open_reader

HUGE_SVG = (
    b'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">'
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 46296 40689">'
    b'<rect width="46296" height="40689" fill="red"/></svg>'
)


def test_an_svg_with_a_huge_canvas_is_drawn_at_a_bounded_size(qapp: Any) -> None:
    image = decode_image(HUGE_SVG)
    assert image is not None and max(image.width(), image.height()) == MAX_SIDE
    colour = image.pixelColor(image.width() // 2, image.height() // 2)
    assert (colour.red(), colour.green()) == (255, 0)


def test_a_data_url_image_is_decoded(qapp: Any) -> None:
    url = "data:image/svg+xml;base64," + base64.b64encode(HUGE_SVG).decode()
    assert data_url_bytes(url) == HUGE_SVG
    assert data_image(QUrl(url)) is not None
    assert data_url_bytes("data:nonsense") is None


def test_an_avif_picture_gets_a_placeholder_naming_its_format(qapp: Any) -> None:
    avif = b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00" + b"\x00" * 64
    assert decode_image(avif) is None
    image = placeholder(avif)
    assert image is not None and image.width() > 100
    assert placeholder(b"not a picture at all") is None


def test_an_inline_svg_on_a_page_is_fitted_to_the_column(
    library: Any, qtbot: Any, real_font: str, tmp_path: Any
) -> None:
    from core.books.importer import import_book
    from tests.core.books.epubgen import make_epub

    svg = '<svg viewBox="0 0 4000 1000"><rect width="4000" height="1000" fill="blue"/></svg>'
    book = import_book(library, make_epub(tmp_path / "s.epub", [("S", f"<p>x</p>{svg}")])).book
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    tags = [
        t for t in re.findall(r"<img\b[^>]*>", view.document().toHtml()) if "data:image/svg" in t
    ]
    assert len(tags) == 1
    width = re.search(r'width="(\d+)"', tags[0])
    assert width and 50 < int(width.group(1)) < 800  # across the column, not 1,600 px wide
