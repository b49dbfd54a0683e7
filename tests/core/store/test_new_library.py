"""A new library is made in one step from the schema the migrations build
(``core/store/frozen/new_library.py``), then the steps after that version run as for any
library: the file it gets is the one the steps one by one make, object for object and row for
row. When a step is added the frozen schema stays as it is; regenerate it (to spare new
libraries the steps) with ``.venv/bin/python -m tests.core.store.test_new_library``."""

from __future__ import annotations

import sqlite3
from typing import Any

import peewee as pw
import pytest

from core.store import models as m
from core.store.frozen import new_library
from core.store.migrations import SCHEMA_VERSION, current_version, migrate
from core.store.page_blocks import margin_page


def _database(path: str = ":memory:") -> pw.SqliteDatabase:
    db = pw.SqliteDatabase(path, pragmas={"page_size": 512, "foreign_keys": 1})
    db.register_function(m.page_text, "margin_text", 1, deterministic=True)
    db.register_function(m.unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    db.connect()
    return db


def _objects(db: pw.SqliteDatabase) -> dict[str, tuple[str, str, str | None]]:
    rows = db.execute_sql("SELECT name, type, tbl_name, sql FROM sqlite_master").fetchall()
    return {name: (kind, table, sql) for name, kind, table, sql in rows}


def _contents(db: pw.SqliteDatabase) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored table's rows (the search indexes' own tables too)."""
    names = db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    return {
        name: sorted(db.execute_sql(f'SELECT * FROM "{name}"').fetchall(), key=repr)
        for (name,) in names
    }


def statements(db: pw.SqliteDatabase) -> list[str]:
    """What makes a database of ``db``'s schema and rows, ``db`` being a new library just
    migrated: each object's own statement in the order SQLite keeps them (a table before its
    indexes, the tables before the views and indexes that read them), without the tables
    SQLite makes itself (a search index's, the AUTOINCREMENT counters); then the counters'
    rows and, for a search index whose statistics its last rebuild wrote, that rebuild."""
    virtual = [
        name
        for (name,) in db.execute_sql(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
    ]
    out = []
    for name, sql in db.execute_sql(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
    ).fetchall():
        shadow = any(name.startswith(f"{table}_") and "'" in sql[:14] for table in virtual)
        if not shadow and name != "sqlite_sequence":
            out.append(sql)
    for name, seq in db.execute_sql("SELECT name, seq FROM sqlite_sequence ORDER BY name"):
        out.append(f"INSERT INTO sqlite_sequence (name, seq) VALUES ('{name}', {int(seq)})")
    for table in virtual:
        (block,) = db.execute_sql(f'SELECT block FROM "{table}_data" WHERE id = 1').fetchone()
        if block:
            out.append(f"INSERT INTO {table}({table}) VALUES('rebuild')")
    return out


def module_text() -> str:
    db = _database()
    migrate(db, one_by_one=True)
    lines = [
        '"""A new library\'s schema at version VERSION: the statements that make the database',
        "the migrations make from an empty file, one by one, up to that version (its objects",
        "as SQLite keeps them; tests/core/store/test_new_library.py checks both are the same and",
        "writes this module again). ``core.store.migrations.migrate`` runs them in one",
        "transaction for a new file, then the steps after VERSION: step by step, a new",
        "library was a transaction a step, tables made and remade (21 ms of CPU, 5 % of",
        "importing a 3 MB text as the first book: issue 41). Frozen: never edited; when",
        'steps are added, written again (or left, and they run after it)."""',
        "",
        f"VERSION = {current_version(db)}",
        "STATEMENTS: tuple[str, ...] = (",
        *(f"    {sql!r}," for sql in statements(db)),
        ")",
        "",
    ]
    return "\n".join(lines)


def test_a_new_library_is_the_one_the_steps_make() -> None:
    one_by_one, at_once = _database(), _database()
    assert migrate(one_by_one, one_by_one=True) == 0
    assert migrate(at_once) == 0
    assert current_version(at_once) == current_version(one_by_one) == SCHEMA_VERSION
    assert _objects(at_once) == _objects(one_by_one)
    assert _contents(at_once) == _contents(one_by_one)
    assert at_once.execute_sql("PRAGMA foreign_key_check").fetchall() == []


def test_the_frozen_schema_is_the_steps_up_to_its_version() -> None:
    """The frozen statements are what the steps up to its version make (regenerated, they
    come out the same): a step never edited, the module never hand-changed."""
    assert new_library.VERSION <= SCHEMA_VERSION
    db = _database()
    migrate(db, one_by_one=True, until=new_library.VERSION)
    assert tuple(statements(db)) == new_library.STATEMENTS


def test_a_new_library_is_made_in_one_transaction(tmp_path: Any) -> None:
    """A failure part way leaves an empty file, and the next opening makes it whole."""
    path = str(tmp_path / "library.sqlite3")
    db = _database(path)
    broken = (*new_library.STATEMENTS[:5], "CREATE TABLE oops (", *new_library.STATEMENTS[5:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(new_library, "STATEMENTS", broken)
        with pytest.raises((pw.DatabaseError, sqlite3.DatabaseError)):
            migrate(db)
    assert current_version(db) == 0 and _objects(db) == {}
    assert migrate(db) == 0 and current_version(db) == SCHEMA_VERSION
    db.close()


if __name__ == "__main__":
    from pathlib import Path

    target = Path(new_library.__file__)
    target.write_text(module_text(), encoding="utf-8")
    print(f"wrote {target}")
