"""Images a book page shows, decoded as a browser would: raster images through Qt's image
plugins, SVG drawn by QtSvg at a bounded size (an SVG may declare a canvas of 46,000 pixels),
and ``data:`` URLs decoded in place. Nothing here reaches the network or the disk."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import unquote_to_bytes

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter

MAX_SIDE = 1600
"""The longest side an SVG is drawn at (the view scales images to its column)."""


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
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(data))
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
    return None if image.isNull() else image


FORMATS = {b"ftypavif": "AVIF", b"ftypavis": "AVIF", b"\xff\x0a": "JPEG XL", b"JXL ": "JPEG XL"}


def image_format(data: bytes) -> str:
    """The name of a picture format no plugin here reads, for the placeholder ("" if unknown)."""
    head = data[:16]
    if head[4:12] in FORMATS:
        return FORMATS[head[4:12]]
    if head[:2] == b"\xff\x0a" or head[4:8] == b"JXL ":
        return "JPEG XL"
    return ""


def placeholder(data: bytes) -> QImage | None:
    """A small grey frame saying which picture could not be drawn (the page's text keeps
    its alt text): for formats Qt's image plugins do not read here (AVIF, JPEG XL)."""
    kind = image_format(data)
    if not kind:
        return None
    image = QImage(QSize(360, 64), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(128, 128, 128, 40))
    painter = QPainter(image)
    painter.setPen(QColor(110, 110, 110))
    painter.drawRect(0, 0, 359, 63)
    painter.drawText(
        image.rect(), Qt.AlignmentFlag.AlignCenter, f"A picture in {kind}, which Margin cannot show"
    )
    painter.end()
    return image
