"""Line art drawn whole (issue 45, item 4): QtSvg stops reading a path after about 65,536
numbers unless told the drawing is trusted; a plain drawing is, a nesting or reuse bomb is not.

The reference is librsvg's ``rsvg-convert`` (Debian's librsvg2-bin, which .ci/system-packages
installs): the white rabbit from Standard Ebooks' *Alice* (Tenniel, CC0) must get at least 95 %
of its ink. Before, QtSvg drew 19 % of it."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QByteArray, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from desktop.reader.book_images import decode_image, plain_svg
from tests.conftest import FIXTURES

RABBIT = FIXTURES / "images" / "tenniel_white_rabbit.svg.gz"


def ink(image: QImage) -> int:
    """Dark pixels of ``image`` drawn on white."""
    flat = QImage(image.size(), QImage.Format.Format_ARGB32)
    flat.fill(QColor("white"))
    painter = QPainter(flat)
    painter.drawImage(0, 0, image)
    painter.end()
    grey = flat.convertToFormat(QImage.Format.Format_Grayscale8)
    data = grey.constBits().tobytes()
    width, line = grey.width(), grey.bytesPerLine()
    return sum(
        sum(1 for b in data[y * line : y * line + width] if b < 128) for y in range(grey.height())
    )


def test_a_long_traced_illustration_keeps_its_ink(qapp: Any, tmp_path: Path) -> None:
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert (Debian's librsvg2-bin) is the reference rasteriser")
    data = gzip.decompress(RABBIT.read_bytes())
    drawn = decode_image(data)
    assert drawn is not None
    svg = tmp_path / "rabbit.svg"
    svg.write_bytes(data)
    reference = tmp_path / "rabbit.png"
    size = ["-w", str(drawn.width()), "-h", str(drawn.height())]
    subprocess.run(["rsvg-convert", *size, "-o", str(reference), str(svg)], check=True)
    expected = ink(QImage(str(reference)))
    assert expected > 100_000
    assert ink(drawn) >= 0.95 * expected


def test_the_default_checks_are_what_cut_it(qapp: Any) -> None:
    """The control: the same drawing through QtSvg's default options loses most strokes."""
    from PySide6.QtSvg import QSvgRenderer

    data = gzip.decompress(RABBIT.read_bytes())
    assert plain_svg(data)
    checked = QSvgRenderer(QByteArray(data))
    image = QImage(489, 764, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    checked.render(painter, QRectF(0, 0, 489, 764))
    painter.end()
    assert ink(image) < 0.5 * ink(decode_image(data) or QImage())


def nested(depth: int) -> bytes:
    return (
        b'<svg xmlns="http://www.w3.org/2000/svg">' + b"<g>" * depth + b"</g>" * depth + b"</svg>"
    )


def test_a_nesting_or_reuse_bomb_keeps_qts_checks() -> None:
    assert plain_svg(nested(20))
    assert not plain_svg(nested(40))
    uses = b'<use href="#a"/>' * 300
    assert not plain_svg(b'<svg xmlns="http://www.w3.org/2000/svg"><g id="a"/>' + uses + b"</svg>")
    assert not plain_svg(b"<svg>" + b" " * 16_000_001 + b"</svg>")
    assert plain_svg(b'<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0h1"/><br/></svg>')
