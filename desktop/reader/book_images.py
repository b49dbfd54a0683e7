"""Images a book page shows, decoded as a browser would: raster images through Qt's image
plugins, SVG drawn by QtSvg at a bounded size (an SVG may declare a canvas of 46,000 pixels),
and ``data:`` URLs decoded in place. Nothing here reaches the network or the disk."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import unquote_to_bytes

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter

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
