"""``BookInfo``, the frozen record of a book, apart from the store's peewee models: the
window lists its shelf with it before the library's code is loaded (``core.store.shelf``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

# 2: contents anchors resolved to their pages (schema v5); 3: the book's own text in the pages
# (note markers, numbered endnotes, verse lines, alt text; core/books, issue 33); 4: EPUB
# links, MathML, fallbacks, printed pages and the book's own styles (issues 28, 29)
PARSER_VERSION = 4


@dataclass(frozen=True)
class BookInfo:
    """A book of the library as callers see it (a frozen record, never a peewee row)."""

    id: int
    title: str
    author: str
    language: str
    format: str
    sha256: str
    original_path: str
    file_path: str
    file_size: int
    page_count: int
    page: int  # the page on screen (restored on open; every jump moves it)
    read_to: int  # how far the reader has read: the spoiler bound (jumps never raise it)
    finished: bool
    status: str
    added_at: dt.datetime
    opened_at: dt.datetime | None
    parser_version: int = PARSER_VERSION

    @property
    def outdated(self) -> bool:
        """Read by an older version of Margin's book readers: its contents pages may be
        wrong until the book is read again (``margin reimport``)."""
        return self.parser_version < PARSER_VERSION

    @property
    def progress(self) -> float:
        """Fraction read, 0..1 (1 when marked finished)."""
        if self.finished:
            return 1.0
        if self.page_count <= 1:
            return 0.0
        return min(1.0, (self.read_to - 1) / (self.page_count - 1))

    @property
    def spoiler_bound(self) -> int | None:
        """Last page the agent may read (``read_to``), or None when the book is finished."""
        return None if self.finished else self.read_to
