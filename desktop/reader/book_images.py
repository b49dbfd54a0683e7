"""Images a book page shows, decoded as a browser would: raster images through Qt's image
plugins, SVG drawn by QtSvg at a bounded size (an SVG may declare a canvas of 46,000 pixels),
AVIF (which Qt's plugins here do not read) through Pillow's libavif when Pillow is installed,
and ``data:`` URLs decoded in place. A format nothing here reads (JPEG XL: no permissively
licensed decoder of a reasonable size) gets a placeholder saying so. Nothing here reaches the
network or the disk."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote_to_bytes

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter

MAX_PIXELS = 40_000_000  # a larger picture is not decoded (a 16,000 × 2,500 strip still is)
MAX_SIDE = 1600
"""The longest side an SVG is drawn at (the view scales images to its column)."""

TRUSTED_BYTES = 16_000_000
TRUSTED_DEPTH = 32
TRUSTED_USES = 256
_TAG = re.compile(rb"<(/?)[A-Za-z][^>]*>")


def plain_svg(data: bytes) -> bool:
    """Whether an SVG may be drawn without QtSvg's resource checks (``AssumeTrustedSource``).

    By default QtSvg stops reading a path after about 65,536 numbers ("Invalid path data; path
    truncated"): Standard Ebooks' Tenniel illustrations, traced line art of 0.6–3 MB, kept
    3–52 % of their ink. The same option also lifts QtSvg's guards against nesting and reuse
    bombs, so it is given only to a drawing that needs neither: under 16 MB, elements nested
    at most 32 deep (Qt's own rendering limit) and at most 256 ``<use>`` references."""
    if len(data) > TRUSTED_BYTES or data.count(b"<use") > TRUSTED_USES:
        return False
    depth = deepest = 0
    for match in _TAG.finditer(data):
        if match.group(1):
            depth -= 1
        elif not match.group().endswith(b"/>"):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > TRUSTED_DEPTH:
                return False
    return True


def data_url_bytes(url: str) -> bytes | None:
    """The bytes of a ``data:`` URL (base64 or percent-encoded); None when malformed."""
    head, comma, payload = url.partition(",")
    if not comma or not head.lower().startswith("data:"):
        return None
    try:
        if head.lower().endswith(";base64"):
            return base64.b64decode(payload, validate=False)
        return unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None


def _svg(data: bytes) -> QImage | None:
    from PySide6.QtSvg import QSvgRenderer, QtSvg

    renderer = QSvgRenderer()
    if plain_svg(data):
        renderer.setOptions(QtSvg.Option.AssumeTrustedSource)
    renderer.load(QByteArray(data))
    if not renderer.isValid():
        return None
    size = renderer.defaultSize()
    if size.isEmpty():
        box = renderer.viewBoxF()
        size = QSize(max(1, round(box.width())), max(1, round(box.height())))
    if size.isEmpty():
        size = QSize(MAX_SIDE, MAX_SIDE)
    size = (
        size.scaled(QSize(MAX_SIDE, MAX_SIDE), Qt.AspectRatioMode.KeepAspectRatio)
        if max(size.width(), size.height()) > MAX_SIDE
        else size
    )
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
    painter.end()
    return image


def decode_image(data: bytes) -> QImage | None:
    """A drawable image from a file's bytes, or None when no plugin can read it."""
    head = data[:512].lstrip()
    if head.startswith(b"<") and (b"<svg" in data[:4096] or b"<!DOCTYPE svg" in head):
        return _svg(data)
    image = QImage.fromData(QByteArray(data))
    if image.isNull() and image_format(data):
        return _pillow(data)
    return None if image.isNull() else image


def _pillow(data: bytes) -> QImage | None:
    """An AVIF (or any format of ``FORMATS`` a Pillow plugin reads) decoded by Pillow, imported
    only when such a picture is met; None without Pillow or when it cannot read the file."""
    try:
        from PIL import Image
    except ImportError:
        return None
    import io

    try:
        with Image.open(io.BytesIO(data)) as picture:
            if picture.width * picture.height > MAX_PIXELS:
                return None
            rgba = picture.convert("RGBA")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None
    raw = rgba.tobytes()
    image = QImage(raw, rgba.width, rgba.height, 4 * rgba.width, QImage.Format.Format_RGBA8888)
    return image.copy()  # its own pixels: ``raw`` goes away


FORMATS = {
    b"ftypavif": "AVIF",
    b"ftypavis": "AVIF",
    b"ftypheic": "HEIC",
    b"ftypheix": "HEIC",
    b"ftypmif1": "HEIF",
    b"ftypjp2 ": "JPEG 2000",
    b"\xff\x0a": "JPEG XL",
    b"JXL ": "JPEG XL",
}


def image_format(data: bytes) -> str:
    """The name of a picture format Qt's plugins here do not read ("" if none of those)."""
    head = data[:16]
    if head[4:12] in FORMATS:
        return FORMATS[head[4:12]]
    if head[:2] == b"\xff\x0a" or head[4:8] == b"JXL ":
        return "JPEG XL"
    return ""


def placeholder(data: bytes) -> QImage | None:
    """A small grey frame saying that a picture could not be drawn, and why (the page's text
    keeps its alt text), in place of a broken image: a format nothing here decodes (JPEG XL;
    AVIF without Pillow), or a file damaged or in a format Margin does not know. None for
    no bytes at all."""
    if not data:
        return None
    kind = image_format(data)
    words = (
        f"A picture in {kind}, a format Margin cannot show"
        if kind
        else "A picture Margin cannot read (damaged, or in a format it does not know)"
    )
    image = QImage(QSize(460, 64), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(128, 128, 128, 40))
    painter = QPainter(image)
    painter.setPen(QColor(110, 110, 110))
    painter.drawRect(0, 0, 459, 63)
    painter.drawText(image.rect(), Qt.AlignmentFlag.AlignCenter, words)
    painter.end()
    image.setText("placeholder", words)  # what it says, for tests and screen readers' logs
    return image
