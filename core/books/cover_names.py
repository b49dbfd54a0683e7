"""Where covers are cached and the colour of a generated one: what the library view needs
before the window's first paint, apart from ``core.books.covers`` (its EPUB checks, patterns
and limits, and ``hashlib``'s OpenSSL: ~7 ms of CPU at start-up)."""

from __future__ import annotations

import re
from pathlib import Path

MAX_COVER_PIXELS = 25_000_000  # a cover bigger than this (e.g. 5000 x 5000) is not drawn
COVERS_VERSION = 2  # 2: SVG covers drawn (the placeholders cached before are made again)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def cover_file(data_dir: Path, sha256: str) -> Path:
    """``<data>/covers/<sha256>.<version>.png``; the name is checked so it can never leave
    the folder."""
    if not _SHA256.match(sha256):
        raise ValueError(f"{sha256!r} is not a SHA-256 hex digest")
    return data_dir / "covers" / f"{sha256}.{COVERS_VERSION}.png"


def cover_colour(title: str) -> tuple[int, int, int]:
    """A calm, stable colour for a generated cover: the hue comes from the title's digest, so
    the same title gets the same colour on every machine and in every run."""
    import colorsys
    import hashlib

    digest = hashlib.sha256(title.strip().casefold().encode("utf-8")).digest()
    hue = int.from_bytes(digest[:2], "big") / 65536
    saturation = 0.35 + digest[2] / 255 * 0.25
    value = 0.45 + digest[3] / 255 * 0.2
    r, g, b = colorsys.hsv_to_rgb(hue, saturation, value)
    return round(r * 255), round(g * 255), round(b * 255)
