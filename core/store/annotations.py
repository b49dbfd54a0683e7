"""Highlights and notes: what the reader marks and writes in a book."""

from __future__ import annotations

import logging
import sqlite3
import zlib
from typing import TYPE_CHECKING, Any

import peewee as pw

from core.errors import BookCode, BookError
from core.store import models as m
from core.store.records import (
    HIGHLIGHT_COLOURS,
    HighlightRecord,
    LibraryBase,
    NoteRecord,
    _highlight,
    _note,
)

if TYPE_CHECKING:  # anchoring (and its message types) load when a highlight needs them
    from core.store.anchoring import LostAnchor
# (and the anchors themselves: importing a book makes none, 2 ms, issue 41)

log = logging.getLogger(__name__)


class Annotations(LibraryBase):
    def lost_anchors(self, book_id: int) -> list[LostAnchor]:
        """What points into the book but was not found when it was last read again."""
        from core.store.anchoring import lost_anchors

        return lost_anchors(self.db, book_id)

    # Highlights -------------------------------------------------------------------------

    def add_highlight(
        self,
        book_id: int,
        page: int,
        text: str,
        *,
        note: str = "",
        colour: str = "yellow",
        anchor: Any = None,
    ) -> HighlightRecord:
        book = self.get_book(book_id)
        self._check_page(book, page)
        if not text.strip():
            raise BookError("empty_highlight", "A highlight needs some selected text.")
        if colour not in HIGHLIGHT_COLOURS:
            raise BookError(
                "bad_colour",
                f'"{colour}" is not a highlight colour; use one of {", ".join(HIGHLIGHT_COLOURS)}.',
            )
        row = m.Highlight.create(
            book=book_id,
            page=page,
            text=text,
            note=note,
            colour=colour,
            anchor=anchor,
            quote=self._quote(book_id, page, text, anchor),
        )
        return _highlight(row)

    def _quote(self, book_id: int, page: int, text: str, anchor: Any) -> dict[str, Any]:
        """The words a highlight is anchored to, with their context (``core.store.anchors``);
        its words alone when its pages cannot be read (damaged text)."""
        try:
            return self._context_quote(book_id, page, text, anchor)
        except (ValueError, zlib.error, pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("highlight on page %d of book %d anchored by its words", page, book_id)
            from core.store.anchors import TextQuote, collapse

            return TextQuote(collapse(text), page=page, end_page=page).to_json()

    def _context_quote(self, book_id: int, page: int, text: str, anchor: Any) -> dict[str, Any]:
        pages = [
            (n, t)
            for n, t in self.db.execute_sql(
                "SELECT number, text FROM page_plain WHERE book_id = ? AND number"
                " BETWEEN ? AND ? ORDER BY number",
                (book_id, max(1, page - 1), page + 2),
            ).fetchall()
        ]
        from core.store.anchoring import highlight_quote  # not on a CLI command's start-up
        from core.store.anchors import BookText

        return highlight_quote(BookText(pages), dict(pages), page, text, anchor).to_json()

    def list_highlights(self, book_id: int, page: int | None = None) -> list[HighlightRecord]:
        query = m.Highlight.select().where(m.Highlight.book == book_id)
        if page is not None:
            query = query.where(m.Highlight.page == page)
        query = query.order_by(m.Highlight.page, m.Highlight.id)
        return [_highlight(h) for h in _rows(query, m.Highlight, ("text", "note"))]

    def update_highlight(
        self, highlight_id: int, *, note: str | None = None, colour: str | None = None
    ) -> HighlightRecord:
        row = m.Highlight.get_or_none(m.Highlight.id == highlight_id)
        if row is None:
            raise BookError(BookCode.NOT_FOUND, f"There is no highlight number {highlight_id}.")
        if colour is not None:
            if colour not in HIGHLIGHT_COLOURS:
                raise BookError("bad_colour", f'"{colour}" is not a highlight colour.')
            row.colour = colour
        if note is not None:
            row.note = note
        row.updated_at = m.utcnow()
        row.save()
        return _highlight(row)

    def delete_highlight(self, highlight_id: int) -> None:
        m.Highlight.delete().where(m.Highlight.id == highlight_id).execute()

    # Notes ------------------------------------------------------------------------------

    def add_note(
        self, book_id: int, text: str, *, page: int | None = None, source: str = "reader"
    ) -> NoteRecord:
        book = self.get_book(book_id)
        if page is not None:
            self._check_page(book, page)
        if not text.strip():
            raise BookError("empty_note", "A note needs some text.")
        quote = None
        if page is not None:
            from core.store.anchors import BookText

            try:
                (first,) = self.db.execute_sql(
                    "SELECT text FROM page_plain WHERE book_id = ? AND number = ?",
                    (book_id, page),
                ).fetchone()
                quote = BookText([(page, first)]).page_start_quote(page).to_json()
            except (ValueError, zlib.error, pw.DatabaseError, sqlite3.DatabaseError):
                log.warning("note on page %d of book %d kept by its page only", page, book_id)
        return _note(
            m.Note.create(book=book_id, page=page, text=text.strip(), source=source, quote=quote)
        )

    def list_notes(self, book_id: int, *, source: str | None = None) -> list[NoteRecord]:
        query = m.Note.select().where(m.Note.book == book_id)
        if source is not None:
            query = query.where(m.Note.source == source)
        query = query.order_by(m.Note.created_at, m.Note.id)
        return [_note(n) for n in _rows(query, m.Note, ("text",))]

    def update_note(self, note_id: int, text: str) -> NoteRecord:
        row = m.Note.get_or_none(m.Note.id == note_id)
        if row is None:
            raise BookError(BookCode.NOT_FOUND, f"There is no note number {note_id}.")
        if not text.strip():
            raise BookError("empty_note", "A note needs some text.")
        row.text = text.strip()
        row.updated_at = m.utcnow()
        row.save()
        return _note(row)

    def delete_note(self, note_id: int) -> None:
        m.Note.delete().where(m.Note.id == note_id).execute()


def _rows(query: Any, model: type[m.BaseModel], texts: tuple[str, ...]) -> list[Any]:
    """The rows of ``query``; when some text was written by another program with bytes that
    are not UTF-8 (SQLite cannot decode it), those columns read with U+FFFD in their place
    (issue 46 item 12: ``margin notes`` crashed)."""
    try:
        return list(query)
    except (sqlite3.OperationalError, pw.OperationalError) as exc:
        if "decode" not in str(exc):
            raise
        log.warning("%s text that is not UTF-8 read with replacements", model.__name__)
    fields = [
        pw.Cast(f, "BLOB").alias(f.name) if f.name in texts else f
        for f in model._meta.sorted_fields
    ]
    rows = list(query.select(*fields))
    for row in rows:
        for name in texts:
            value = getattr(row, name)
            if isinstance(value, bytes | bytearray):
                setattr(row, name, bytes(value).decode("utf-8", "replace"))
    return rows
