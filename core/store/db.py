"""Opening the library database: one SQLite file, WAL, foreign keys on, migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import peewee as pw

from core.errors import StorageError
from core.store.migrations import migrate
from core.store.models import ALL_MODELS

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "synchronous": "normal",
    "busy_timeout": 15000,
    "cache_size": -16000,
}


def open_database(path: Path) -> pw.SqliteDatabase:
    """Open (creating and migrating if needed) the database at ``path`` and bind the models."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = pw.SqliteDatabase(str(path), pragmas=PRAGMAS, check_same_thread=False)
        db.bind(ALL_MODELS, bind_refs=False, bind_backrefs=False)
        db.connect(reuse_if_open=True)
        migrate(db)
    except (OSError, sqlite3.DatabaseError, pw.DatabaseError) as exc:
        raise StorageError(
            "cannot_open",
            f"Margin cannot open its library database at {path}: {exc}.",
            hint="Check that the folder is writable and the disk is not full.",
        ) from exc
    return db
