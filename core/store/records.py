"""The library's records and the base every part of ``Library`` shares: frozen records of
books, highlights and notes (never peewee rows, so callers cannot write by accident), and the
look-ups each part needs (a book by id, a page check, a copy's stored path)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import peewee as pw

from core.domain.book import PageContent
from core.errors import BookCode, BookError
from core.paths import Paths
from core.store import models as m
from core.store.book_info import PARSER_VERSION as PARSER_VERSION  # (moved there)
from core.store.book_info import BookInfo
from core.store.db import damaged_text
from core.store.page_blocks import page_content

if TYPE_CHECKING:
    from core.store.anchors import TextQuote


@dataclass(frozen=True)
class HighlightRecord:
    """A highlight as callers see it (a frozen record)."""

    id: int
    book_id: int
    page: int
    text: str
    note: str
    colour: str
    anchor: Any
    created_at: dt.datetime
    quote: TextQuote | None = None  # its words, found again after a re-read
    style: str = "highlight"  # or "underline", "strike" (core.store.highlight_style)


@dataclass(frozen=True)
class NoteRecord:
    """A note as callers see it (a frozen record)."""

    id: int
    book_id: int
    page: int | None
    text: str
    source: str
    created_at: dt.datetime
    updated_at: dt.datetime


HIGHLIGHT_COLOURS = ("yellow", "green", "blue", "pink", "purple")


def _record[R](cls: type[R], row: Any) -> R:
    """A frozen record from a peewee row: the record's fields are the row's attributes."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    return cls(**{name: getattr(row, name) for name in names})


def _book(row: m.Book, data: Path) -> BookInfo:
    """The record of a book row; its copy's path, stored relative to the data folder (so a
    moved folder keeps working), made absolute under ``data``."""
    info = _record(BookInfo, row)
    if info.file_path and not Path(info.file_path).is_absolute():
        return dataclasses.replace(info, file_path=str(data / info.file_path))
    return info


PAGE_ROWS = (
    "SELECT p.book_id, p.number, p.label, p.chapter, p.text, b.data FROM page p"
    " LEFT JOIN page_block b ON b.book_id = p.book_id AND b.first = p.block"
)


def _page(row: tuple[Any, ...]) -> PageContent:
    """A page from a row of ``PAGE_ROWS``: its own blob, or its part of its block."""
    book_id, number, label, chapter, packed, block = row
    try:
        text, html = page_content(packed, block)
    except (ValueError, zlib.error) as exc:  # UnicodeDecodeError is a ValueError
        raise damaged_text(f"page {number} of book {book_id}", book_id) from exc
    return PageContent(int(number), label, text, html, int(chapter))


def page_texts(db: pw.SqliteDatabase, book_id: int) -> list[tuple[int, str]]:
    """Every page's number and text of a book, in order (the text is stored compressed)."""
    try:
        rows = db.execute_sql(
            "SELECT number, text FROM page_plain WHERE book_id = ? ORDER BY number", (book_id,)
        ).fetchall()
    except (pw.DatabaseError, sqlite3.DatabaseError) as exc:
        if "user-defined function" not in str(exc):
            raise
        raise damaged_text(f"a page of book {book_id}", book_id) from exc
    return [(int(n), t) for n, t in rows]


def _highlight(row: m.Highlight) -> HighlightRecord:
    from core.store.anchors import TextQuote  # (importing a book reads no highlight)

    record = _record(HighlightRecord, row)
    return dataclasses.replace(record, quote=TextQuote.from_json(record.quote))


def _note(row: m.Note) -> NoteRecord:
    return _record(NoteRecord, row)


class LibraryBase:
    """What every part of ``Library`` stands on: the folder, the database, a book by id."""

    def __init__(self, paths: Paths, db: pw.SqliteDatabase) -> None:
        self.paths = paths
        self.db = db

    def get_book(self, book_id: int) -> BookInfo:
        row = m.Book.get_or_none((m.Book.id == book_id) & (m.Book.status == "ready"))
        if row is None:
            raise BookError(
                BookCode.NOT_FOUND,
                f"There is no book number {book_id} in the library: it may have been "
                "removed in another Margin window or with the margin command.",
            )
        return _book(row, self.paths.data)

    def _check_page(self, book: BookInfo, number: int) -> None:
        if not 1 <= number <= book.page_count:
            raise BookError(
                BookCode.BAD_PAGE,
                f'"{book.title}" has pages 1 to {book.page_count}; there is no page {number}.',
            )

    def _stored_path(self, file_path: str) -> str:
        """A copy's path as stored: relative to the data folder when it is inside it (moving
        the folder keeps the library whole, and an old folder left behind is never read)."""
        path = Path(file_path)
        if path.is_absolute() and path.is_relative_to(self.paths.data):
            return path.relative_to(self.paths.data).as_posix()
        return file_path
