"""Schema v12's table rebuild (migration-owned: the migration keeps this copy, whatever
live code does later): a table's integer key made AUTOINCREMENT by copying the table with
the same columns, rows, indexes and triggers."""

from __future__ import annotations

import re
from typing import Any

import peewee as pw

from core.errors import StorageError


def fk_violations(db: pw.SqliteDatabase) -> set[tuple[Any, ...]]:
    return {tuple(row) for row in db.execute_sql("PRAGMA foreign_key_check").fetchall()}


def rebuild_autoincrement(db: pw.SqliteDatabase, table: str) -> None:
    row = db.execute_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if row is None or "AUTOINCREMENT" in row[0].upper():
        return
    create, count = re.subn(
        r'("?id"?\s+INTEGER\s+NOT\s+NULL\s+PRIMARY\s+KEY)',
        r"\1 AUTOINCREMENT",
        row[0],
        count=1,
        flags=re.IGNORECASE,
    )
    if not count:
        raise StorageError("migration_failed", f"The {table} table has an unexpected key.")
    rebuilt = f"{table}_rebuilt"
    create = re.sub(rf'^CREATE TABLE "?{table}"?', f'CREATE TABLE "{rebuilt}"', create)
    extras = [
        sql
        for (sql,) in db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
            "AND sql IS NOT NULL",
            (table,),
        ).fetchall()
    ]
    db.execute_sql(create)
    db.execute_sql(f'INSERT INTO "{rebuilt}" SELECT * FROM "{table}"')
    db.execute_sql(f'DROP TABLE "{table}"')
    db.execute_sql(f'ALTER TABLE "{rebuilt}" RENAME TO "{table}"')
    for sql in extras:
        db.execute_sql(sql)
