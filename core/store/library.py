"""The library repository: books, pages, reading position, highlights and notes.

The only place outside the importer that reads and writes those tables. Returns frozen
records, never peewee rows, so callers (CLI, window, agent tools) cannot write by accident.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import peewee as pw

from core.domain.book import ChunkContent as BookChunk
from core.domain.book import PageContent, ParsedBook, TocItem
from core.errors import BookCode, BookError, StorageError
from core.paths import Paths
from core.progress import CancelToken
from core.store import models as m
from core.store.db import damaged_text, open_database

log = logging.getLogger(__name__)

# 2: contents anchors resolved to their pages (schema v5); 3: the book's own text in the pages
# (note markers, numbered endnotes, verse lines, alt text; core/books, issue 33)
PARSER_VERSION = 3


@dataclass(frozen=True)
class BookInfo:
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


@dataclass(frozen=True)
class HighlightRecord:
    id: int
    book_id: int
    page: int
    text: str
    note: str
    colour: str
    anchor: Any
    created_at: dt.datetime
    style: str = "highlight"  # or "underline", "strike" (core.store.highlight_style)


@dataclass(frozen=True)
class NoteRecord:
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


def _page(row: m.Page) -> PageContent:
    try:
        text, html = m.unpack_page(row.text)
    except (ValueError, zlib.error) as exc:  # UnicodeDecodeError is a ValueError
        raise damaged_text(f"page {row.number} of book {row.book_id}", row.book_id) from exc
    return PageContent(row.number, row.label, text, html, row.chapter)


def page_texts(db: pw.SqliteDatabase, book_id: int) -> list[tuple[int, str]]:
    """Every page's number and text of a book, in order (the text is stored compressed)."""
    rows = db.execute_sql(
        "SELECT number, text FROM page WHERE book_id = ? ORDER BY number", (book_id,)
    ).fetchall()
    try:
        return [(int(n), m.page_text(t)) for n, t in rows]
    except (ValueError, zlib.error) as exc:
        raise damaged_text(f"a page of book {book_id}", book_id) from exc


def _highlight(row: m.Highlight) -> HighlightRecord:
    return _record(HighlightRecord, row)


def _note(row: m.Note) -> NoteRecord:
    return _record(NoteRecord, row)


class Library:
    """Open with ``Library.open(paths)``; one per process (models bind to one database)."""

    def __init__(self, paths: Paths, db: pw.SqliteDatabase) -> None:
        self.paths = paths
        self.db = db

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

    def get_book(self, book_id: int) -> BookInfo:
        row = m.Book.get_or_none((m.Book.id == book_id) & (m.Book.status == "ready"))
        if row is None:
            raise BookError(
                BookCode.NOT_FOUND,
                f"There is no book number {book_id} in the library: it may have been "
                "removed in another Margin window or with the margin command.",
            )
        return _book(row, self.paths.data)

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

    def delete_book(self, book_id: int) -> None:
        """Remove a book with its pages, chunks, highlights, notes and conversations."""
        book = self.get_book(book_id)
        from core.store.conversations import Conversations

        conversation_ids = [
            c.id
            for c in m.Conversation.select(m.Conversation.id).where(m.Conversation.book == book_id)
        ]
        Conversations(self.db).stop_answers(conversation_ids)  # answers in other processes
        with self.db.atomic():
            self._delete_rows([book_id])
        for conversation_id in conversation_ids:  # their event logs go with them
            self.paths.event_log(conversation_id).unlink(missing_ok=True)
        if book.file_path:
            copy = Path(book.file_path)
            if copy.is_relative_to(self.paths.books):
                copy.unlink(missing_ok=True)

    def _delete_rows(self, book_ids: list[int]) -> None:
        """The one place that removes books' rows with their search index (call inside a
        transaction): FTS5 rows have no foreign key to cascade."""
        if not book_ids:
            return
        rebuild = not self._unindex(book_ids)
        m.Book.delete().where(m.Book.id.in_(book_ids)).execute()
        if rebuild:
            self.repair_index()

    def _unindex(self, book_ids: list[int]) -> bool:
        """Take books' chunks out of the search index (inside a transaction). An external-
        content index needs each chunk's text to do so: when some of it is damaged, returns
        False, and the caller rebuilds the index once those chunks are gone."""
        chunk_ids = m.Chunk.select(m.Chunk.id).where(m.Chunk.book.in_(book_ids))
        try:
            with self.db.atomic():  # a savepoint: a failure leaves the index as it was
                m.ChunkIndex.delete().where(m.ChunkIndex.rowid.in_(chunk_ids)).execute()
        except (pw.DatabaseError, sqlite3.DatabaseError) as exc:
            text = str(exc)
            if not any(s in text for s in ("user-defined function", "malformed", "corrupt")):
                raise
            log.warning("damaged chunk text or index (books %s): the index is rebuilt", book_ids)
            return False
        return True

    def _rebuild_index(self) -> None:
        self.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")

    # Repair ---------------------------------------------------------------------------

    def index_damaged(self) -> bool:
        """Whether the search index disagrees with the books' text or cannot be read (FTS5's
        own integrity check against its content)."""
        try:
            self.db.execute_sql(
                "INSERT INTO chunk_index(chunk_index, rank) VALUES('integrity-check', 1)"
            )
        except (pw.DatabaseError, sqlite3.DatabaseError) as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            log.warning("the search index is damaged", exc_info=True)
            return True
        return False

    def repair_index(self) -> bool:
        """Build the search index again from the books' stored text (it is derived data:
        nothing else is touched). When rebuilding fails (the index's own tables damaged),
        the index is created afresh with the same definition and filled. Returns False when
        it had to stay empty because some stored text is damaged too (``damaged_text``)."""
        try:
            with self.db.atomic():
                self._rebuild_index()
            return True
        except (pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("rebuilding the search index failed; creating it afresh", exc_info=True)
        row = self.db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunk_index'"
        ).fetchone()
        with self.db.atomic():
            self.db.execute_sql("DROP TABLE IF EXISTS chunk_index")
            self.db.execute_sql(row[0])
        try:
            with self.db.atomic():
                self._rebuild_index()
        except (pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("the search index stays empty: stored text is damaged", exc_info=True)
            return False
        return True

    def damaged_text(self, book_id: int) -> bool:
        """Whether some of a book's stored pages or search passages no longer unpack."""
        rows = self.db.execute_sql("SELECT text FROM page WHERE book_id = ?", (book_id,))
        try:
            for (packed,) in rows:
                m.unpack_page(packed)
            self.db.execute_sql(
                "SELECT count(length(t.text)) FROM chunk c JOIN chunk_text t ON t.id = c.id "
                "WHERE c.book_id = ?",
                (book_id,),
            ).fetchone()
        except (ValueError, zlib.error, pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("book %d has damaged stored text", book_id, exc_info=True)
            return True
        return False

    def add_book(
        self,
        *,
        parsed: ParsedBook,
        chunks: Sequence[BookChunk],
        sha256: str,
        original_path: str,
        file_path: str,
        file_size: int,
        title: str,
        before_commit: Callable[[], None] = lambda: None,
        cancel: CancelToken | None = None,
        progress: Callable[[float, str], None] = lambda fraction, message: None,
    ) -> int:
        """Write a parsed book — the book, its pages, contents, chunks and search index — in
        ONE transaction; ``before_commit`` runs last inside it (the importer renames its copy
        there, so a book row never exists without its file). Returns the book's id."""
        with self.db.atomic():
            now = m.utcnow()
            row = m.Book.create(
                title=title,
                author=parsed.author.strip(),
                language=parsed.language.strip(),
                format=parsed.format.value,
                sha256=sha256,
                original_path=original_path,
                file_path=self._stored_path(file_path),
                file_size=file_size,
                page_count=len(parsed.pages),
                page=1,
                read_to=1,
                status="importing",
                parser_version=PARSER_VERSION,
                added_at=now,
                updated_at=now,
            )
            book_id = int(row.id)
            if cancel is not None:
                cancel.check()
            progress(0.92, "Indexing for search")
            self._insert_content(book_id, parsed, chunks)
            if cancel is not None:
                cancel.check()
            m.Book.update(status="ready").where(m.Book.id == book_id).execute()
            before_commit()
        return book_id

    def _insert_content(
        self, book_id: int, parsed: ParsedBook, chunks: Sequence[BookChunk]
    ) -> None:
        """Pages, contents, chunks and the search index of one book (inside a transaction):
        the one place that writes the index."""
        cursor = self.db.cursor()
        # Two things take most of the time, and both let go of the GIL: SQLite indexing the
        # plain text, and zlib packing pages and chunks for storage. So the packing runs on
        # a second thread while this one fills the index. The chunks' ids are chosen here:
        # inside this write transaction they are the next ones, contiguous and in order.
        with ThreadPoolExecutor(1, thread_name_prefix="pack") as pool:
            packed = pool.submit(self._pack, book_id, parsed, chunks)
            row = cursor.execute("SELECT coalesce(max(id), 0) FROM chunk").fetchone()
            first_id = int(row[0]) + 1
            cursor.executemany(
                "INSERT INTO chunk_index (rowid, text) VALUES (?, ?)",
                [(first_id + i, c.text) for i, c in enumerate(chunks)],
            )
            cursor.executemany(
                "INSERT INTO toc_entry (book_id, ordinal, title, level, page)"
                " VALUES (?, ?, ?, ?, ?)",
                [(book_id, i, t.title, t.level, t.page) for i, t in enumerate(parsed.toc)],
            )
            pages, chunk_texts = packed.result()
        cursor.executemany(
            "INSERT INTO page (book_id, number, label, chapter, text) VALUES (?, ?, ?, ?, ?)",
            pages,
        )
        cursor.executemany(
            "INSERT INTO chunk (id, book_id, ordinal, chapter, start_page, end_page, text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (first_id + i, book_id, c.ordinal, c.chapter, c.start_page, c.end_page, blob)
                for i, (c, blob) in enumerate(zip(chunks, chunk_texts, strict=True))
            ],
        )

    @staticmethod
    def _pack(
        book_id: int, parsed: ParsedBook, chunks: Sequence[BookChunk]
    ) -> tuple[list[tuple[int, int, str, int, bytes]], list[bytes]]:
        """The page rows and chunk blobs of a book, packed for storage."""
        pages = [
            (book_id, p.number, p.label, p.chapter, m.pack_page(p.text, p.html))
            for p in parsed.pages
        ]
        return pages, Library._pack_chunks(parsed, chunks)

    @staticmethod
    def _pack_chunks(parsed: ParsedBook, chunks: Sequence[BookChunk]) -> list[bytes]:
        texts = {p.number: p.text.encode("utf-8") for p in parsed.pages}
        return [
            m.pack_chunk(
                c.text, m.chunk_pages(texts.get(c.start_page, b""), texts.get(c.end_page, b""))
            )
            for c in chunks
        ]

    def replace_content(
        self, book_id: int, *, parsed: ParsedBook, chunks: Sequence[BookChunk]
    ) -> BookInfo:
        """Read a book again (a newer reader): its pages, contents, chunks and search index
        replaced in one transaction; notes, highlights and conversations stay."""
        book = self.get_book(book_id)
        count = len(parsed.pages)
        with self.db.atomic():
            rebuild = not self._unindex([book_id])
            for model in (m.Chunk, m.Page, m.TocEntry):
                model.delete().where(model.book == book_id).execute()
            self.db.execute_sql("DELETE FROM spoiler_stats WHERE book_id = ?", (book_id,))
            if rebuild:  # the damaged chunks are gone: index what is left, then the new ones
                self.repair_index()
            self._insert_content(book_id, parsed, chunks)
            m.Book.update(
                page_count=count,
                page=max(1, min(book.page, count)),
                read_to=max(1, min(book.read_to, count)),
                parser_version=PARSER_VERSION,
                updated_at=m.utcnow(),
            ).where(m.Book.id == book_id).execute()
        return self.get_book(book_id)

    def remove_unfinished(self) -> int:
        """Remove books an interrupted import left "importing"; returns how many."""
        with self.db.atomic():
            stale = [b.id for b in m.Book.select(m.Book.id).where(m.Book.status != "ready")]
            self._delete_rows(stale)
        return len(stale)

    def _stored_path(self, file_path: str) -> str:
        """A copy's path as stored: relative to the data folder when it is inside it (moving
        the folder keeps the library whole, and an old folder left behind is never read)."""
        path = Path(file_path)
        if path.is_absolute() and path.is_relative_to(self.paths.data):
            return path.relative_to(self.paths.data).as_posix()
        return file_path

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

    def _check_page(self, book: BookInfo, number: int) -> None:
        if not 1 <= number <= book.page_count:
            raise BookError(
                BookCode.BAD_PAGE,
                f'"{book.title}" has pages 1 to {book.page_count}; there is no page {number}.',
            )

    def page(self, book_id: int, number: int) -> PageContent:
        book = self.get_book(book_id)
        self._check_page(book, number)
        row = m.Page.get((m.Page.book == book_id) & (m.Page.number == number))
        return _page(row)

    def pages(self, book_id: int, start: int, end: int) -> list[PageContent]:
        """Pages ``start``..``end`` inclusive (1-based), in order."""
        book = self.get_book(book_id)
        self._check_page(book, start)
        self._check_page(book, end)
        rows = (
            m.Page.select()
            .where((m.Page.book == book_id) & m.Page.number.between(start, end))
            .order_by(m.Page.number)
        )
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
            book=book_id, page=page, text=text, note=note, colour=colour, anchor=anchor
        )
        return _highlight(row)

    def list_highlights(self, book_id: int, page: int | None = None) -> list[HighlightRecord]:
        query = m.Highlight.select().where(m.Highlight.book == book_id)
        if page is not None:
            query = query.where(m.Highlight.page == page)
        return [_highlight(h) for h in query.order_by(m.Highlight.page, m.Highlight.id)]

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
        return _note(m.Note.create(book=book_id, page=page, text=text.strip(), source=source))

    def list_notes(self, book_id: int, *, source: str | None = None) -> list[NoteRecord]:
        query = m.Note.select().where(m.Note.book == book_id)
        if source is not None:
            query = query.where(m.Note.source == source)
        return [_note(n) for n in query.order_by(m.Note.created_at, m.Note.id)]

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
