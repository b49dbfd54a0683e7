"""Pictures a page shows (issue 29, item 3): SVG drawn at a bounded size, data: URLs decoded,
and a placeholder naming a format Qt cannot read here (AVIF, JPEG XL)."""

from __future__ import annotations

import base64
from typing import Any

from PySide6.QtCore import QUrl

from desktop.reader.book_images import MAX_SIDE, data_url_bytes, decode_image, placeholder
from desktop.reader.links import data_image
from desktop.reader.picture_text import pictures
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


def test_a_picture_that_cannot_be_drawn_gets_a_placeholder_saying_why(qapp: Any) -> None:
    avif = b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00" + b"\x00" * 64  # a broken AVIF
    assert decode_image(avif) is None
    image = placeholder(avif)
    assert image is not None and image.width() > 100
    assert image.text("placeholder") == "A picture in AVIF, a format Margin cannot show"
    damaged = placeholder(b"not a picture at all")
    assert damaged is not None and "cannot read (damaged" in damaged.text("placeholder")
    assert placeholder(b"") is None


def test_an_inline_svg_on_a_page_is_fitted_to_the_column(
    library: Any, qtbot: Any, real_font: str, tmp_path: Any
) -> None:
    from core.books.importer import import_book
    from tests.core.books.epubgen import make_epub

    svg = '<svg viewBox="0 0 4000 1000"><rect width="4000" height="1000" fill="blue"/></svg>'
    book = import_book(library, make_epub(tmp_path / "s.epub", [("S", f"<p>x</p>{svg}")])).book
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    tags = [(n, w) for n, w in pictures(view.document()) if n.startswith("data:image/svg")]
    assert len(tags) == 1
    assert 50 < tags[0][1] < 800  # across the column, not 1,600 px wide


def test_an_svg_page_shows_the_picture_it_wraps(
    library: Any, qtbot: Any, real_font: str, tmp_path: Any
) -> None:
    """Issue 45, item 6: an SVG file of the book that only wraps a JPEG or PNG of the book
    (``<image xlink:href="…">``, as cover pages are made) was drawn blank: QtSvg opens no other
    file. Its pictures are now read from the book."""
    from PySide6.QtCore import QBuffer, QIODevice, QUrl
    from PySide6.QtGui import QColor, QImage, QTextDocument

    from core.books.importer import import_book
    from tests.core.books.epubgen import make_epub

    red = QImage(40, 60, QImage.Format.Format_RGB32)
    red.fill(QColor("red"))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    red.save(buffer, "PNG")
    page = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'viewBox="0 0 40 60"><image width="40" height="60" xlink:href="pictures/red.png"/></svg>'
    )
    files = {"OEBPS/images/page.svg": page, "OEBPS/images/pictures/red.png": bytes(buffer.data())}
    body = '<p>Before.</p><p><img src="images/page.svg" alt="A red page"/></p>'
    manifest = (
        '<item id="svg" href="images/page.svg" media-type="image/svg+xml"/>'
        '<item id="png" href="images/pictures/red.png" media-type="image/png"/>'
    )
    path = make_epub(tmp_path / "p.epub", [("P", body)], extra_files=files, extra_manifest=manifest)
    book = import_book(library, path).book
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    sources = [name for name, _ in pictures(view.document())]
    assert sources, view.document().toHtml()[:400]
    image = view.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(sources[0]))
    assert isinstance(image, QImage) and not image.isNull()
    middle = image.pixelColor(image.width() // 2, image.height() // 2)
    assert (middle.red(), middle.green(), middle.alpha()) == (255, 0, 255)


def test_an_svg_picture_outside_the_book_or_too_many_stays_out() -> None:
    from core.books.svgimages import MAX_PICTURES, inline_images

    asked: list[str] = []

    def read(name: str) -> bytes | None:
        asked.append(name)
        return b"\x89PNG fake"

    svg = (
        b'<svg><image href="../../../etc/passwd"/><image href="https://x.org/a.png"/>'
        b'<image href="data:image/png;base64,AA=="/><image href="a.png"/></svg>'
    )
    out = inline_images(svg, "OEBPS/images/p.svg", read)
    assert asked == ["OEBPS/images/a.png"]
    assert b"../../../etc/passwd" in out and b"https://x.org/a.png" in out
    assert out.count(b"data:image/png;base64,") == 2
    many = b"<svg>" + b'<image href="a.png"/>' * (MAX_PICTURES + 5) + b"</svg>"
    assert inline_images(many, "p.svg", read).count(b"data:image/png") == MAX_PICTURES
