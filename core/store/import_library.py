"""The library as ``margin import`` writes to it, on the standard sqlite3 module alone.

Importing a 3 MB text is a third of a second of CPU, and loading peewee and the models took
about 25 ms of it (issue 41). What an import needs of the library is small: a book by its
SHA-256 or id, the rows of a parsed book in one transaction (``core.store.content_rows``, the
same writer the whole library uses), a restored copy's path. So ``open_for_import`` opens the
library here when it can, and gives None when the whole library must (``core.store.library``):
one at an older (or newer) version, which that updates (or refuses) in words; a read-only
folder; a book an interrupted import left half made; anything that fails to open.

A new library (no file yet) is made here, with the frozen schema in one transaction, and
written with a rollback journal until it is closed, then switched to WAL like every library:
its first book's pages are appended to the file once instead of written to the write-ahead
log and copied from it into the file (11 ms of the 3 MB text's import). A rollback journal
keeps it safe all the same: the pages it appends need none, and a process killed in the
middle leaves a journal that SQLite rolls back at the next open (which switches the file to
WAL: every connection asks for it).
"""

from __future__ import annotations

import binascii
import datetime as dt
import logging
import os
import re
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.domain.book import ChunkContent, ParsedBook
from core.errors import BookCode, BookError
from core.paths import Paths
from core.progress import CancelToken
from core.store.book_info import PARSER_VERSION, BookInfo
from core.store.content_rows import insert_content
from core.store.db_base import BUSY_TIMEOUT_S, PRAGMAS, update_lock
from core.store.packing import page_text, unpack_chunk
from core.store.page_blocks import margin_page

log = logging.getLogger("core.store.library")

_BOOK = (
    "SELECT id, title, author, language, format, sha256, original_path, file_path, file_size,"
    " page_count, position, read_to, finished, status, added_at, opened_at, parser_version"
    " FROM book"
)
# the forms of a stored time that peewee's DateTimeField reads (the rest of the library reads
# them so; strptime would load _strptime and calendar, 2 ms)
_TIME = re.compile(r"\d{4}-\d\d-\d\d(?: \d\d:\d\d:\d\d(?:\.\d{1,6})?)?")


class ImportConnection(sqlite3.Connection):
    """The library's connection here (it takes attributes: ``margin_no_background``)."""

    margin_no_background = True  # ``margin import`` starts no background work


class ImportLibrary:
    """What ``core.books.importer`` uses of a ``Library``, for ``margin import``."""

    read_only = False

    def __init__(self, paths: Paths, db: ImportConnection, rollback_journal: bool) -> None:
        self.paths = paths
        self.db = db
        self._rollback_journal = rollback_journal

    def close(self) -> None:
        """Close the library; a new one is switched to WAL first (failing that, the next
        connection does it)."""
        try:
            if self._rollback_journal:
                self.db.execute("PRAGMA journal_mode = wal")
        except sqlite3.Error:
            log.info("a new library stays in rollback mode until its next open", exc_info=True)
        finally:
            self.db.close()

    # Books -----------------------------------------------------------------------------

    def book_by_sha256(self, sha256: str) -> BookInfo | None:
        row = self.db.execute(
            f"{_BOOK} WHERE sha256 = ? AND status = 'ready'", (sha256,)
        ).fetchone()
        return None if row is None else self._book(row)

    def get_book(self, book_id: int) -> BookInfo:
        row = self.db.execute(f"{_BOOK} WHERE id = ? AND status = 'ready'", (book_id,)).fetchone()
        if row is None:
            raise BookError(
                BookCode.NOT_FOUND,
                f"There is no book number {book_id} in the library: it may have been "
                "removed in another Margin window or with the margin command.",
            )
        return self._book(row)

    def set_file_path(self, book_id: int, file_path: str) -> None:
        """Point a book at its (restored) copy."""
        self.db.execute(
            "UPDATE book SET file_path = ?, updated_at = ? WHERE id = ?",
            (self._stored_path(file_path), _stamp(_utcnow()), book_id),
        )

    def file_names(self) -> set[str]:
        """Names of the library's own copies that books refer to."""
        rows = self.db.execute("SELECT file_path FROM book").fetchall()
        return {Path(path).name for (path,) in rows if path}

    def remove_unfinished(self) -> int:
        """None here: a library with a book an interrupted import left is opened whole."""
        return 0

    def add_book(
        self,
        *,
        parsed: ParsedBook,
        chunks: Sequence[ChunkContent],
        sha256: str,
        original_path: str,
        file_path: str,
        file_size: int,
        title: str,
        before_commit: Callable[[], None] = lambda: None,
        cancel: CancelToken | None = None,
        progress: Callable[[float, str], None] = lambda fraction, message: None,
    ) -> int:
        """``Library.add_book``: the book, its pages, contents, chunks and search index in ONE
        transaction, ``before_commit`` last inside it. Returns the book's id."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            now = _stamp(_utcnow())
            cursor = db.execute(
                "INSERT INTO book (title, author, language, format, sha256, original_path,"
                " file_path, file_size, page_count, position, read_to, finished, status,"
                " parser_version, added_at, updated_at, opened_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, 0, 'importing', ?, ?, ?, NULL)",
                (
                    title,
                    parsed.author.strip(),
                    parsed.language.strip(),
                    parsed.format.value,
                    sha256,
                    original_path,
                    self._stored_path(file_path),
                    file_size,
                    len(parsed.pages),
                    PARSER_VERSION,
                    now,
                    now,
                ),
            )
            book_id = int(cursor.lastrowid or 0)
            if cancel is not None:
                cancel.check()
            progress(0.92, "Indexing for search")
            insert_content(cursor, book_id, parsed, chunks)
            if cancel is not None:
                cancel.check()
            db.execute("UPDATE book SET status = 'ready' WHERE id = ?", (book_id,))
            before_commit()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return book_id

    def _stored_path(self, file_path: str) -> str:
        """As ``Library`` stores a copy's path: relative to the data folder when inside it."""
        path = Path(file_path)
        if path.is_absolute() and path.is_relative_to(self.paths.data):
            return path.relative_to(self.paths.data).as_posix()
        return file_path

    def _book(self, row: Sequence[Any]) -> BookInfo:
        (book_id, title, author, language, fmt, sha256, original, file_path, size, pages) = row[:10]
        page, read_to, finished, status, added_at, opened_at, version = row[10:]
        if file_path and not Path(file_path).is_absolute():
            file_path = str(self.paths.data / file_path)
        return BookInfo(
            id=book_id,
            title=title,
            author=author,
            language=language,
            format=fmt,
            sha256=sha256,
            original_path=original,
            file_path=file_path,
            file_size=size,
            page_count=pages,
            page=page,
            read_to=read_to,
            finished=bool(finished),
            status=status,
            added_at=_time(added_at),
            opened_at=_time(opened_at),
            parser_version=version,
        )


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _stamp(when: dt.datetime) -> str:
    """A time as peewee stores it (sqlite3's form of a datetime)."""
    return when.isoformat(" ")


def _time(value: Any) -> Any:
    """A stored time as peewee's DateTimeField reads it (a text it cannot read stays text)."""
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        return value
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        return value


def open_for_import(
    paths: Paths, *, on_wait: Callable[[], None] | None = None
) -> ImportLibrary | None:
    """The library in ``paths`` opened for ``margin import`` without peewee, or None when the
    whole library must open it (see the module's docstring)."""
    from core.store.frozen import new_library
    from core.store.migrations import SCHEMA_VERSION

    path = paths.database
    new = not path.exists()
    if new and new_library.VERSION != SCHEMA_VERSION:
        return None  # steps after the frozen schema: the migrations make it
    if not new and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return None
    try:
        paths.ensure()
        if new:
            _write_new(path)  # (failing that, or beaten to it, the file is made below)
        db = sqlite3.connect(
            path,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
            factory=ImportConnection,
        )
    except (OSError, sqlite3.Error):
        log.info("opening the library for an import without peewee failed", exc_info=True)
        return None
    try:
        library = _opened(paths, db, new, new_library.STATEMENTS, SCHEMA_VERSION, on_wait)
    except (OSError, sqlite3.Error):
        log.info("opening the library for an import without peewee failed", exc_info=True)
        library = None
    if library is None:
        db.close()
    return library


def _opened(
    paths: Paths,
    db: ImportConnection,
    new: bool,
    schema: Sequence[str],
    version: int,
    on_wait: Callable[[], None] | None,
) -> ImportLibrary | None:
    for name, value in PRAGMAS.items():
        if name == "journal_mode" and new:
            value = "delete"  # until it is closed (see the module's docstring)
        db.execute(f"PRAGMA {name} = {value}")
    rollback = db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.create_function("margin_text", 1, page_text, deterministic=True)
    db.create_function("margin_chunk", 3, unpack_chunk, deterministic=True)
    db.create_function("margin_page", 2, margin_page, deterministic=True)
    if _version(db) == 0:
        with update_lock(paths.database, on_wait):
            if _version(db) == 0 and not _tables(db):  # (another process may have made it)
                db.execute("BEGIN IMMEDIATE")
                try:
                    for sql in schema:
                        db.execute(sql)
                    db.execute(f"PRAGMA user_version = {version}")
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
    if _version(db) != version:
        return None  # older or newer: the whole library updates it, or says why it cannot
    if db.execute("SELECT 1 FROM book WHERE status != 'ready' LIMIT 1").fetchone():
        return None  # an interrupted import's book: the whole library removes it
    return ImportLibrary(paths, db, rollback)


def _write_new(path: Path) -> bool:
    """A new library's file at ``path``, written whole from its image (made by SQLite from
    the frozen schema: core.store.frozen.new_library_image) rather than by running the
    schema's statements; False when there is no image of this version and page size, or
    another process made the file first. The file appears whole or not at all (written
    beside it, then linked to its name, which fails when it exists)."""
    from core.store.frozen import new_library_image as image
    from core.store.migrations import SCHEMA_VERSION

    if image.VERSION != SCHEMA_VERSION or PRAGMAS["page_size"] != image.PAGE_SIZE:
        return False
    data = zlib.decompress(binascii.a2b_base64("".join(image.IMAGE)))
    part = path.with_name(f"{path.name}.new-{os.getpid()}")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(part, path)
    except FileExistsError:
        return False
    finally:
        part.unlink(missing_ok=True)
    return True


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _tables(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
