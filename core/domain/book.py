"""What a format parser hands to the rest of Margin, and what the store keeps of a book.

Parsers turn a file into a ``ParsedBook``. Reflowable formats (EPUB, TXT, Markdown, HTML)
give chapters of blocks; ``core.books.pages`` cuts those into stable virtual pages. PDFs give
their real pages directly. Page numbers are 1-based everywhere a person or the model sees
them, and in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class BookFormat(StrEnum):
    EPUB = "epub"
    PDF = "pdf"
    TXT = "txt"
    MARKDOWN = "md"
    HTML = "html"
    CBZ = "cbz"  # a comic: a zip of pictures (core/books/comics.py)


@dataclass(frozen=True)
class Block:
    """One paragraph-like unit of a reflowable book.

    ``text`` is plain text (for search and the model). ``html`` is a small, safe fragment for
    display: only inline formatting, links and images whose ``src`` points inside the book
    (``book:/path/in/archive``); never scripts, styles or remote URLs.
    ``kind`` is one of: p, h1..h6, li, quote, pre, img, hr, table. A table's ``text`` is one
    line per row with cells joined by " · "; its ``html`` is the whole ``<table>``.
    """

    kind: str
    text: str
    html: str
    style: str = ""  # the book's CSS for it, checked (core.books.bookcss); "" = none


@dataclass(frozen=True)
class Chapter:
    """A chapter of a parsed book: its title and its blocks, in reading order."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class TocItem:
    """A table-of-contents entry. For reflowable books ``chapter`` is the chapter index and
    ``page`` is filled in by pagination; for PDFs ``page`` is the 1-based page number."""

    title: str
    level: int
    page: int = 0
    chapter: int | None = None


@dataclass(frozen=True)
class TocAnchor(TocItem):
    """A contents entry as a reflowable parser gives it, before pagination: ``block`` is the
    index of the block inside ``chapter`` where the entry starts (a heading below chapter
    level), None for the chapter's start. Pagination turns it into a plain ``TocItem``."""

    block: int | None = None


@dataclass(frozen=True)
class PageContent:
    """One page as stored: 1-based ``number``, a display ``label`` ("iv", "12"), plain
    ``text`` (paragraphs separated by a blank line), optional ``html`` for reflowable views
    ("" for a page that is nothing but its text's paragraphs: shown as
    ``core.store.packing.plain_html(text)``, which the store keeps it as), and the
    ``chapter`` index it belongs to (chunks never cross chapters)."""

    number: int
    label: str
    text: str
    html: str | None = None
    chapter: int = 0


@dataclass(frozen=True)
class ParsedBook:
    """What a format parser gives: the book's metadata, chapters, pages and contents."""

    format: BookFormat
    title: str
    author: str = ""
    language: str = ""
    chapters: tuple[Chapter, ...] = ()
    pages: tuple[PageContent, ...] = ()
    toc: tuple[TocItem, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ChunkContent:
    """A passage for search: never crosses a chapter; 1-based inclusive page range."""

    ordinal: int
    start_page: int
    end_page: int
    chapter: int
    text: str
