"""AVIF and JPEG XL pictures in a book (issue 45, item 6). Qt's image plugins read neither:
AVIF is decoded by Pillow (its wheels carry libavif), JPEG XL, which no permissively licensed
decoder of a reasonable size reads, shows a placeholder saying so instead of a broken image.
The pictures are made here: a tiny AVIF by Pillow, and a JPEG XL file's signature."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument

from core.store.library import Library
from desktop.reader.book_images import decode_image
from desktop.reader.picture_text import pictures
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader

JXL = b"\xff\x0a\xfa\x1f\x00\x90\x00\x08\x01" + b"\x00" * 40  # a JPEG XL codestream's start


def tiny_avif() -> bytes:
    """8 × 4 pixels: red on the left half, blue on the right (lossless, so colours hold)."""
    image_module = pytest.importorskip("PIL.Image", reason="Pillow decodes AVIF (pyproject)")
    from PIL import features

    if not features.check("avif"):
        pytest.skip("this Pillow was built without AVIF")
    picture = image_module.new("RGB", (8, 4), (255, 0, 0))
    picture.paste((0, 0, 255), (4, 0, 8, 4))
    out = io.BytesIO()
    picture.save(out, "AVIF", lossless=True)
    return out.getvalue()


def test_an_avif_picture_is_decoded(qapp: Any) -> None:
    image = decode_image(tiny_avif())
    assert image is not None and (image.width(), image.height()) == (8, 4)
    left, right = image.pixelColor(1, 2), image.pixelColor(6, 2)
    assert left.red() > 200 and left.blue() < 60
    assert right.blue() > 200 and right.red() < 60


def test_a_damaged_avif_is_not_decoded(qapp: Any) -> None:
    broken = tiny_avif()[:40]
    assert decode_image(broken) is None


def test_the_page_draws_the_avif_and_says_why_the_jpeg_xl_is_not_drawn(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    avif = tiny_avif()
    page = (
        '<p>Before.</p><p><img src="a.avif" alt="red and blue"/></p>'
        '<p><img src="b.jxl" alt="a photograph"/></p><p>After.</p>'
    )
    manifest = (
        '<item id="a" href="a.avif" media-type="image/avif"/>'
        '<item id="b" href="b.jxl" media-type="image/jxl"/>'
    )
    book = make_epub(
        tmp_path / "p.epub",
        [("Pictures", page)],
        extra_files={"OEBPS/a.avif": avif, "OEBPS/b.jxl": JXL},
        extra_manifest=manifest,
    )
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    names = " ".join(name for name, _ in pictures(view.document()))  # images or marks
    assert "a.avif" in names and "b.jxl" in names
    kind = int(QTextDocument.ResourceType.ImageResource.value)
    drawn = view.loadResource(kind, QUrl("book:/OEBPS/a.avif"))
    assert isinstance(drawn, QImage) and drawn.size().width() == 8
    assert drawn.pixelColor(1, 1).red() > 200
    shown = view.loadResource(kind, QUrl("book:/OEBPS/b.jxl"))
    assert isinstance(shown, QImage)
    assert shown.text("placeholder") == "A picture in JPEG XL, a format Margin cannot show"
