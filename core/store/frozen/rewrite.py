"""Rewriting the library file after migrations (SQLite's VACUUM): once to give back the
space a migration freed, once to change the page size. Both are skipped, and never tried
again, when another process holds the library: that costs only space. Owned by the
migrations, as the rest of this folder (they import no live code).

Run outside any transaction, after ``core.store.migrations.migrate``'s steps."""

from __future__ import annotations

import logging

import peewee as pw

log = logging.getLogger(__name__)


def repage(db: pw.SqliteDatabase, size: int) -> None:
    """Rewrite the file with pages of ``size`` bytes (VACUUM, which also gives freed pages
    back); skipped, and not tried again, when another process has the library open (WAL
    cannot be left then): its pages stay as they were, which only costs space."""
    try:
        db.execute_sql("PRAGMA journal_mode = DELETE")
        db.execute_sql(f"PRAGMA page_size = {int(size)}")
        db.execute_sql("VACUUM")
    except pw.OperationalError as exc:
        log.info("smaller pages skipped: %s", exc)
    finally:
        try:
            db.execute_sql("PRAGMA journal_mode = WAL")
        except pw.OperationalError as exc:
            log.warning("the library stays out of WAL: %s", exc)


def reclaim(db: pw.SqliteDatabase) -> None:
    """Give freed pages back to the disk (VACUUM); skipped, and tried again never, when
    another process holds the library — the space is then reused by later imports."""
    try:
        db.execute_sql("VACUUM")
    except pw.OperationalError as exc:
        log.info("VACUUM after the migration skipped: %s", exc)
