"""Where the companions keep what they made: two tables of the library (schema: see
``core.store.migrations._companions``), each row compressed JSON.

- ``companion_page``: what a scan found on one page (X-Ray's ``PageScan``), per kind;
- ``companion_item``: what was made from pages (the X-Ray as of a bound, a chapter's
  recap, a model's note), by kind and key, with the version of the code that made it.

Both go with their book (foreign keys). A book read again with a newer reader keeps its
rows; ``book_print`` (file, reader version, pages) tells a stale scan from a good one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import peewee as pw

log = logging.getLogger(__name__)


def pack(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes | memoryview) -> Any:
    return json.loads(zlib.decompress(bytes(blob)))


def book_print(db: pw.SqliteDatabase, book_id: int) -> str:
    """What a scan of the book depends on: its file, the reader that cut its pages, and how
    many pages there are. Stored with what the companions made; a change means start again."""
    row = db.execute_sql(
        "SELECT sha256, parser_version, page_count FROM book WHERE id = ?", (book_id,)
    ).fetchone()
    return ":".join(str(v) for v in row) if row else ""


class CompanionStore:
    """Reads and writes the companions' rows of one library (thread-safe as peewee is: one
    connection per thread)."""

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db

    # per page -------------------------------------------------------------------------

    def page_rows(self, book_id: int, kind: str, until: int) -> list[tuple[int, Any]]:
        """(page, value) of the stored scans of pages 1..``until``, in order."""
        rows = self.db.execute_sql(
            "SELECT page, data FROM companion_page WHERE book_id = ? AND kind = ? AND page <= ? "
            "ORDER BY page",
            (book_id, kind, until),
        ).fetchall()
        out: list[tuple[int, Any]] = []
        for page, blob in rows:
            try:
                out.append((int(page), unpack(blob)))
            except (ValueError, zlib.error) as exc:  # damaged: the page is scanned again
                log.warning("companion scan of book %s page %s unreadable: %s", book_id, page, exc)
        return out

    def put_pages(self, book_id: int, kind: str, rows: Iterable[tuple[int, Any]]) -> None:
        with _cache_write(), self.db.atomic():
            self.db.cursor().executemany(
                "INSERT OR REPLACE INTO companion_page (book_id, kind, page, data) "
                "VALUES (?, ?, ?, ?)",
                [(book_id, kind, page, pack(value)) for page, value in rows],
            )

    def drop_pages(self, book_id: int, kind: str) -> None:
        with _cache_write():
            self.db.execute_sql(
                "DELETE FROM companion_page WHERE book_id = ? AND kind = ?", (book_id, kind)
            )

    # made things ----------------------------------------------------------------------

    def item(self, book_id: int, kind: str, key: str, version: int) -> Any | None:
        """The stored value, or None when there is none made by this ``version``."""
        try:
            row = self.db.execute_sql(
                "SELECT version, data FROM companion_item WHERE book_id = ? AND kind = ? "
                "AND key = ?",
                (book_id, kind, key),
            ).fetchone()
        except (sqlite3.Error, pw.DatabaseError) as exc:
            log.info("companion item unreadable: %s", exc)
            return None
        if row is None or int(row[0]) != version:
            return None
        try:
            return unpack(row[1])
        except (ValueError, zlib.error) as exc:
            log.warning("companion item %s/%s of book %s unreadable: %s", kind, key, book_id, exc)
            return None

    def items(self, book_id: int, kind: str, version: int) -> dict[str, Any]:
        """Every stored value of ``kind`` made by ``version``, by key."""
        rows = self.db.execute_sql(
            "SELECT key, data FROM companion_item WHERE book_id = ? AND kind = ? AND version = ?",
            (book_id, kind, version),
        ).fetchall()
        out: dict[str, Any] = {}
        for key, blob in rows:
            try:
                out[str(key)] = unpack(blob)
            except (ValueError, zlib.error):
                continue
        return out

    def put_item(self, book_id: int, kind: str, key: str, version: int, value: Any) -> None:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with _cache_write(), self.db.atomic():
            if self.db.execute_sql("SELECT 1 FROM book WHERE id = ?", (book_id,)).fetchone():
                self.db.execute_sql(
                    "INSERT OR REPLACE INTO companion_item "
                    "(book_id, kind, key, version, data, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (book_id, kind, key, version, pack(value), now),
                )

    def drop_items(self, book_id: int, kind: str) -> None:
        with _cache_write():
            self.db.execute_sql(
                "DELETE FROM companion_item WHERE book_id = ? AND kind = ?", (book_id, kind)
            )


@contextlib.contextmanager
def _cache_write() -> Iterator[None]:
    """A write of what the companions made: on a read-only library it is skipped (they are
    made again next time), so X-Ray and the story so far, which only read, still show
    (issue 46 item 12)."""
    try:
        yield
    except (sqlite3.OperationalError, pw.OperationalError) as exc:
        if "readonly" not in str(exc) and "read-only" not in str(exc):
            raise
        log.info("companions not kept: the library is read-only")
