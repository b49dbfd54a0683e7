"""What a format parser hands to the rest of Margin: ``ParsedBook`` and its parts.

They are defined in ``core.domain.book`` (the store persists them, so they live below both
the parsers and the store); the parsers import them from here.
"""

from __future__ import annotations

from core.domain.book import (
    Block,
    BookFormat,
    Chapter,
    ChunkContent,
    PageContent,
    ParsedBook,
    TocAnchor,
    TocItem,
)

__all__ = [
    "Block",
    "BookFormat",
    "Chapter",
    "ChunkContent",
    "PageContent",
    "ParsedBook",
    "TocAnchor",
    "TocItem",
]
