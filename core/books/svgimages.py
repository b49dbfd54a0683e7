"""Pictures an SVG file of the book draws from other files of the book.

A page that is itself an SVG (a cover page, a full-page illustration) often holds nothing but
``<image xlink:href="../images/cover.jpg"/>``. QtSvg draws an SVG from its bytes alone and never
opens another file, so such a page came out blank. Here each relative ``href`` is replaced by a
``data:`` URL of the file it names, read through the caller's ``read`` (which keeps to the
book's own archive); anything else (a remote address, a ``data:`` URL already, a missing file,
a file over the budget) is left as it is."""

from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

MAX_PICTURE_BYTES = 20_000_000
"""A picture larger than this is not inlined (the page stays as QtSvg draws it)."""

MAX_PICTURES = 64

TYPES = {
    b"\x89PNG": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF8": "image/gif",
    b"RIFF": "image/webp",
}

_IMAGE_HREF = re.compile(
    rb"""(<image\b[^>]*?\s(?:xlink:)?href\s*=\s*)(["'])([^"'<>]*)\2""", re.IGNORECASE
)


def _kind(data: bytes) -> str:
    for magic, kind in TYPES.items():
        if data.startswith(magic):
            return kind
    head = data[:512].lstrip()
    return "image/svg+xml" if head.startswith(b"<") and b"<svg" in data[:4096] else ""


def inline_images(svg: bytes, where: str, read: Callable[[str], bytes | None]) -> bytes:
    """``svg`` (a file at ``where`` inside the book) with its ``<image>`` files inlined."""
    if b"<image" not in svg:
        return svg
    base = posixpath.dirname(where.lstrip("/"))
    count = 0

    def inline(match: re.Match[bytes]) -> bytes:
        nonlocal count
        href = match.group(3).decode("utf-8", errors="replace").strip()
        parts = urlsplit(href)
        if count >= MAX_PICTURES or not parts.path or parts.scheme or parts.netloc:
            return match.group(0)
        name = posixpath.normpath(posixpath.join(base, unquote(parts.path)))
        if name.startswith(("..", "/")):
            return match.group(0)
        data = read(name)
        kind = _kind(data) if data else ""
        if not data or not kind or len(data) > MAX_PICTURE_BYTES:
            return match.group(0)
        count += 1
        url = f"data:{kind};base64,".encode() + base64.b64encode(data)
        return match.group(1) + match.group(2) + url + match.group(2)

    return _IMAGE_HREF.sub(inline, svg)
