"""Opening the library database: one SQLite file, WAL, foreign keys on, migrated. (Its
pragmas, the update lock and the errors for people live in ``core.store.db_base``, without
peewee, and are named here too.)"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import peewee as pw

from core.errors import StorageError
from core.store.db_base import (  # noqa: F401  (named here too, where callers import them)
    BUSY_TIMEOUT_S,
    PRAGMAS,
    REPAIR_HINT,
    WAL_LIMIT,
    damaged_text,
    disk_full,
    explain,
    read_only,
    update_lock,
)
from core.store.migrations import SCHEMA_VERSION, current_version, migrate
from core.store.models import ALL_MODELS, page_text, unpack_chunk
from core.store.page_blocks import margin_page


def _folder_read_only(path: Path) -> bool:
    """An existing library in a folder this process cannot write (a read-only mount, a
    backup, another user's folder)."""
    return path.is_file() and not (os.access(path.parent, os.W_OK) and os.access(path, os.W_OK))


def _open_read_only(path: Path) -> pw.SqliteDatabase:
    """Open an existing library for reading only. A WAL database in a folder where SQLite
    cannot make its shared-memory file opens only as "immutable" (nothing can change it
    there anyway)."""
    from urllib.parse import quote

    pragmas = {k: v for k, v in PRAGMAS.items() if k in ("busy_timeout", "cache_size")}
    last: Exception | None = None
    for flags in ("mode=ro", "immutable=1"):
        db = pw.SqliteDatabase(
            f"file:{quote(str(path))}?{flags}", uri=True, pragmas=pragmas, check_same_thread=False
        )
        db.bind(ALL_MODELS, bind_refs=False, bind_backrefs=False)
        db.register_function(page_text, "margin_text", 1, deterministic=True)
        db.register_function(unpack_chunk, "margin_chunk", 3, deterministic=True)
        db.register_function(margin_page, "margin_page", 2, deterministic=True)
        try:
            db.connect(reuse_if_open=True)
            version = current_version(db)
        except (sqlite3.DatabaseError, pw.DatabaseError) as exc:
            last = exc
            db.close()
            continue
        if version != SCHEMA_VERSION:
            db.close()
            raise StorageError(
                "read_only",
                f"The library folder {path.parent} is read-only, and this version of Margin "
                "needs to update the library before it can open it.",
                hint="Open it once where the folder is writable, or make it writable.",
            )
        db.margin_read_only = True  # type: ignore[attr-defined]
        log.warning("the library %s is read-only: opened for reading only", path)
        return db
    assert last is not None
    raise last


log = logging.getLogger(__name__)


class _Database(pw.SqliteDatabase):
    """Transactions take the write lock when they begin (``BEGIN IMMEDIATE``). A deferred
    one that reads and then writes (read a book's state, write it back) cannot wait for the
    lock: when another process (the background vectors worker, the CLI, a second window)
    has written since its read began, SQLite refuses the write at once with "database is
    locked" and the busy timeout never applies. Taking the lock first makes it wait."""

    def atomic(self, *args: Any, **kwargs: Any) -> Any:
        if not args and "lock_type" not in kwargs:
            kwargs["lock_type"] = "IMMEDIATE"
        return super().atomic(*args, **kwargs)


def open_database(path: Path, *, on_wait: Callable[[], None] | None = None) -> pw.SqliteDatabase:
    """Open (creating and migrating if needed) the database at ``path`` and bind the models.
    While another process updates the schema, this waits for it (``on_wait`` is called
    once, when the wait begins)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = _Database(str(path), pragmas=PRAGMAS, check_same_thread=False)
        db.bind(ALL_MODELS, bind_refs=False, bind_backrefs=False)
        # Page and chunk text are stored compressed: SQL reads a page's text through the view
        # page_plain (margin_page: pages in blocks, issue 41; margin_text unpacks a page
        # stored alone, schema v8), a chunk's through the view chunk_text (margin_chunk), and
        # so does the search index. Every connection gets all three.
        db.register_function(page_text, "margin_text", 1, deterministic=True)
        db.register_function(unpack_chunk, "margin_chunk", 3, deterministic=True)
        db.register_function(margin_page, "margin_page", 2, deterministic=True)
        db.connect(reuse_if_open=True)
        if current_version(db) != SCHEMA_VERSION:
            with update_lock(path, on_wait):
                migrate(db)  # reads the version again: the other process may have done it
    except (OSError, sqlite3.DatabaseError, pw.DatabaseError) as exc:
        if _folder_read_only(path):
            try:
                return _open_read_only(path)
            except (sqlite3.DatabaseError, pw.DatabaseError):
                log.warning("opening %s for reading failed too", path, exc_info=True)
        known = explain(exc, path)
        if known is not None:
            raise known from exc
        raise StorageError(
            "cannot_open",
            f"Margin cannot open its library database at {path}: {exc}.",
            hint="Check that the folder is writable and the disk is not full.",
        ) from exc
    return db
