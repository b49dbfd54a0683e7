"""Numbered forward migrations. ``PRAGMA user_version`` holds the schema version.

Each step runs in one transaction. Add a new function to ``MIGRATIONS``; never edit a
released one.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee as pw

from core.errors import StorageError
from core.store import models as m


def _v1_initial(db: pw.SqliteDatabase) -> None:
    # Tables as they were in schema 1; later columns are added by later steps.
    db.create_tables(m.ALL_MODELS, safe=False)
    db.execute_sql("ALTER TABLE tool_call DROP COLUMN detail")
    db.execute_sql("ALTER TABLE book DROP COLUMN read_to")


def _v2_tool_call_detail(db: pw.SqliteDatabase) -> None:
    db.execute_sql("ALTER TABLE tool_call ADD COLUMN detail TEXT")


def _v3_read_to(db: pw.SqliteDatabase) -> None:
    # Until v3 the page on screen was also the spoiler bound: start the bound there.
    db.execute_sql("ALTER TABLE book ADD COLUMN read_to INTEGER NOT NULL DEFAULT 1")
    db.execute_sql("UPDATE book SET read_to = position")


MIGRATIONS: tuple[Callable[[pw.SqliteDatabase], None], ...] = (
    _v1_initial,
    _v2_tool_call_detail,
    _v3_read_to,
)
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(db: pw.SqliteDatabase) -> int:
    return int(db.execute_sql("PRAGMA user_version").fetchone()[0])


def migrate(db: pw.SqliteDatabase) -> int:
    """Bring the database to ``SCHEMA_VERSION``; returns the version it started at."""
    start = current_version(db)
    if start > SCHEMA_VERSION:
        raise StorageError(
            "newer_schema",
            f"This library was written by a newer version of Margin (schema {start}, "
            f"this version knows up to {SCHEMA_VERSION}).",
            hint="Update Margin to open it.",
        )
    for version in range(start + 1, SCHEMA_VERSION + 1):
        with db.atomic():
            MIGRATIONS[version - 1](db)
            db.execute_sql(f"PRAGMA user_version = {version}")
    return start
