"""The library repository: books, pages, reading position, highlights and notes.

The only place outside the importer that reads and writes those tables. Returns frozen
records, never peewee rows, so callers (CLI, window, agent tools) cannot write by accident.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import peewee as pw

from core.domain.book import PageContent, TocItem
from core.errors import BookCode, BookError, StorageError
from core.paths import Paths
from core.store import models as m
from core.store.annotations import Annotations
from core.store.book_content import BookContent
from core.store.db import open_database
from core.store.records import (
    HIGHLIGHT_COLOURS,
    PAGE_ROWS,
    PARSER_VERSION,
    BookInfo,
    HighlightRecord,
    NoteRecord,
    _book,
    _page,
    page_texts,
)

__all__ = [
    "HIGHLIGHT_COLOURS",
    "PARSER_VERSION",
    "BookInfo",
    "HighlightRecord",
    "Library",
    "NoteRecord",
    "page_texts",
]


class Library(BookContent, Annotations):
    """Open with ``Library.open(paths)``; one per process (models bind to one database)."""

    @classmethod
    def open(cls, paths: Paths, *, on_wait: Callable[[], None] | None = None) -> Library:
        """Open the library in ``paths``; ``on_wait`` is called when another process is
        updating it for this version and opening waits for that."""
        try:
            paths.ensure()
        except OSError as exc:
            raise StorageError(
                "cannot_create",
                f"Margin cannot create its data folder {paths.data}: {exc.strerror or exc}.",
                hint="Choose another folder with --data-dir or MARGIN_HOME.",
            ) from exc
        return cls(paths, open_database(paths.database, on_wait=on_wait))

    @property
    def read_only(self) -> bool:
        """Opened for reading only: the library's folder cannot be written."""
        return bool(getattr(self.db, "margin_read_only", False))

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    # Books -----------------------------------------------------------------------------

    def list_books(self) -> list[BookInfo]:
        """Ready books, most recently opened (then added) first."""
        query = (
            m.Book.select()
            .where(m.Book.status == "ready")
            .order_by(pw.fn.COALESCE(m.Book.opened_at, m.Book.added_at).desc(), m.Book.id.desc())
        )
        return [_book(b, self.paths.data) for b in query]

    def find_book(self, ref: str | int) -> BookInfo:
        """A book by id or by an unambiguous, case-insensitive title prefix."""
        text = str(ref).strip()
        if text.isdigit():
            return self.get_book(int(text))
        if not text:
            raise BookError(BookCode.NOT_FOUND, "No book was named.")
        escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = list(
            m.Book.select()
            .where(
                (m.Book.status == "ready")
                & pw.SQL("lower(title) LIKE ? ESCAPE '\\'", (escaped + "%",))
            )
            .order_by(m.Book.title)
        )
        exact = [r for r in rows if r.title.lower() == text.lower()]
        if len(exact) == 1:
            return _book(exact[0], self.paths.data)
        if not rows:
            raise BookError(
                BookCode.NOT_FOUND,
                f'No book in the library has a title starting with "{text}".',
                hint="List your books with 'margin books'.",
            )
        if len(rows) > 1:
            names = "; ".join(f"{r.id}: {r.title}" for r in rows[:5])
            raise BookError(
                BookCode.AMBIGUOUS,
                f'"{text}" matches {len(rows)} books ({names}).',
                hint="Use the book's number or more of its title.",
            )
        return _book(rows[0], self.paths.data)

    def book_by_sha256(self, sha256: str) -> BookInfo | None:
        row = m.Book.get_or_none((m.Book.sha256 == sha256) & (m.Book.status == "ready"))
        return None if row is None else _book(row, self.paths.data)

    def set_file_path(self, book_id: int, file_path: str) -> None:
        """Point a book at its (restored) copy."""
        m.Book.update(file_path=self._stored_path(file_path), updated_at=m.utcnow()).where(
            m.Book.id == book_id
        ).execute()

    def file_names(self) -> set[str]:
        """Names of the library's own copies that books refer to."""
        return {Path(b.file_path).name for b in m.Book.select(m.Book.file_path) if b.file_path}

    @staticmethod
    def _clamp(book: BookInfo, page: int) -> int:
        try:
            number = int(page)
        except (TypeError, ValueError, OverflowError):
            raise BookError(BookCode.BAD_PAGE, f"{page!r} is not a page number.") from None
        return max(1, min(number, max(1, book.page_count)))

    def set_position(self, book_id: int, page: int) -> BookInfo:
        """The reader says "I am here and have read up to here": sets both the page on screen
        and ``read_to`` (lower as well as higher), clamped to the book."""
        book = self.get_book(book_id)
        page = self._clamp(book, page)
        m.Book.update(page=page, read_to=page, updated_at=m.utcnow()).where(
            m.Book.id == book_id
        ).execute()
        return self.get_book(book_id)

    def set_page(
        self, book_id: int, page: int, *, reading: bool = False, reached: int | None = None
    ) -> BookInfo:
        """Move the page on screen. ``reading`` is True when the reader got there by reading
        on (turning pages forward, scrolling on): then ``read_to`` rises to it if it was
        lower; ``reached`` is the furthest page reached by reading since the last save (it
        may be past ``page`` when the reader read on and then jumped back). A jump
        (contents, citation, Find, Go to, Back) passes neither and never raises ``read_to``;
        nothing here ever lowers it."""
        book = self.get_book(book_id)
        page = self._clamp(book, page)
        fields: dict[Any, Any] = {m.Book.page: page, m.Book.updated_at: m.utcnow()}
        furthest = max(page if reading else 0, self._clamp(book, reached) if reached else 0)
        if furthest > book.read_to:
            fields[m.Book.read_to] = furthest
        m.Book.update(fields).where(m.Book.id == book_id).execute()
        return self.get_book(book_id)

    def set_read_to(self, book_id: int, page: int) -> BookInfo:
        """Set only the spoiler bound, lower as well as higher ("I have read up to here")."""
        book = self.get_book(book_id)
        page = self._clamp(book, page)
        m.Book.update(read_to=page, updated_at=m.utcnow()).where(m.Book.id == book_id).execute()
        return self.get_book(book_id)

    def set_finished(self, book_id: int, finished: bool) -> BookInfo:
        self.get_book(book_id)
        m.Book.update(finished=finished, updated_at=m.utcnow()).where(
            m.Book.id == book_id
        ).execute()
        return self.get_book(book_id)

    def mark_opened(self, book_id: int) -> None:
        m.Book.update(opened_at=m.utcnow()).where(m.Book.id == book_id).execute()

    # Pages and contents -----------------------------------------------------------------

    def page(self, book_id: int, number: int) -> PageContent:
        book = self.get_book(book_id)
        self._check_page(book, number)
        row = self.db.execute_sql(
            f"{PAGE_ROWS} WHERE p.book_id = ? AND p.number = ?", (book_id, number)
        ).fetchone()
        if row is None:
            raise pw.DoesNotExist(f"page {number} of book {book_id}")
        return _page(row)

    def pages(self, book_id: int, start: int, end: int) -> list[PageContent]:
        """Pages ``start``..``end`` inclusive (1-based), in order."""
        book = self.get_book(book_id)
        self._check_page(book, start)
        self._check_page(book, end)
        rows = self.db.execute_sql(
            f"{PAGE_ROWS} WHERE p.book_id = ? AND p.number BETWEEN ? AND ? ORDER BY p.number",
            (book_id, start, end),
        ).fetchall()
        return [_page(r) for r in rows]

    def page_texts(self, book_id: int) -> list[tuple[int, str]]:
        """Every page's number and text, in order (no HTML): what find and the spoiler
        check read once per book."""
        return page_texts(self.db, book_id)

    def page_labels(self, book_id: int) -> list[str]:
        rows = (
            m.Page.select(m.Page.number, m.Page.label)
            .where(m.Page.book == book_id)
            .order_by(m.Page.number)
        )
        return [r.label or str(r.number) for r in rows]

    def toc(self, book_id: int) -> list[TocItem]:
        self.get_book(book_id)
        rows = m.TocEntry.select().where(m.TocEntry.book == book_id).order_by(m.TocEntry.ordinal)
        return [TocItem(title=r.title, level=r.level, page=r.page) for r in rows]
