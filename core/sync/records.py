"""What sync carries, kind by kind: the rows of Margin's own tables as payloads, and how a
payload is written back. Books are named by their SHA-256 (the same file on every device);
a conversation's messages name their conversation by its sync id.

Read and written with plain SQL on the open database: one pass over a table, no models."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.store.models import utcnow


@dataclass(frozen=True)
class Kind:
    name: str
    table: str
    fields: tuple[str, ...]
    per_book: bool = False  # one per book (uid "kind:sha"): never inserted or deleted
    parent: str = ""  # the kind this one belongs to ("conversation" for messages)

    def select(self) -> str:
        cols = ", ".join(f"t.{f}" for f in self.fields)
        if self.parent:
            return (
                f"SELECT t.id, b.sha256, t.{self.parent}_id, {cols} FROM {self.table} t "
                f"JOIN {self.parent} p ON p.id = t.{self.parent}_id "
                "JOIN book b ON b.id = p.book_id WHERE b.status = 'ready'"
            )
        return (
            f"SELECT t.id, b.sha256, 0, {cols} FROM {self.table} t "
            "JOIN book b ON b.id = t.book_id WHERE b.status = 'ready'"
        )


def _per_book_select(kind: Kind) -> str:
    cols = ", ".join(f"b.{f}" for f in kind.fields)
    return f"SELECT b.id, b.sha256, 0, {cols} FROM book b WHERE b.status = 'ready'"


KINDS: tuple[Kind, ...] = (
    Kind("book", "book", ("title", "author"), per_book=True),
    Kind("position", "book", ("position", "read_to", "finished"), per_book=True),
    Kind(
        "highlight",
        "highlight",
        ("page", "text", "note", "style", "colour", "anchor", "quote", "created_at"),
    ),
    Kind("note", "note", ("page", "text", "source", "quote", "created_at")),
    Kind("conversation", "conversation", ("title", "quote", "created_at")),
    Kind(
        "message",
        "message",
        (
            "role",
            "kind",
            "content",
            "text",
            "selection_text",
            "selection_page",
            "status",
            "citations",
            "created_at",
        ),
        parent="conversation",
    ),
)
BY_NAME = {k.name: k for k in KINDS}
# a record copied when two devices edited it at once: its text is what the reader wrote
COPIED_ON_CONFLICT = frozenset({"highlight", "note", "conversation"})


@dataclass(frozen=True)
class Row:
    kind: str
    local_id: int
    book: str
    parent_id: int  # the local id of its parent (messages), else 0
    data: dict[str, Any]


def digest(data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def rows(db: pw.SqliteDatabase, kind: Kind, only: int | None = None) -> Iterator[Row]:
    """Every row of ``kind`` in ready books (or the one with id ``only``)."""
    sql = _per_book_select(kind) if kind.per_book else kind.select()
    params: tuple[Any, ...] = ()
    if only is not None:
        sql += f" AND {'b' if kind.per_book else 't'}.id = ?"
        params = (only,)
    if kind.name == "message":
        sql += " AND t.status != 'running'"
    for row in db.execute_sql(sql, params):
        local_id, book, parent, *values = row
        data = dict(zip(kind.fields, values, strict=True))
        if "finished" in data:
            data["finished"] = bool(data["finished"])
        yield Row(kind.name, local_id, book, parent or 0, data)


def book_id(db: pw.SqliteDatabase, sha: str) -> int | None:
    row = db.execute_sql(
        "SELECT id FROM book WHERE sha256 = ? AND status = 'ready'", (sha,)
    ).fetchone()
    return None if row is None else int(row[0])


def write(
    db: pw.SqliteDatabase,
    kind: Kind,
    local_id: int | None,
    book: int,
    parent: int,
    data: dict[str, Any],
) -> int:
    """Write ``data`` into the row ``local_id`` (a new row when None); returns its id."""
    fields = [f for f in kind.fields if f in data]
    values = [data[f] for f in fields]
    now = str(utcnow())
    if kind.per_book:
        sets = ", ".join(f"{f} = ?" for f in fields)
        db.execute_sql(f"UPDATE book SET {sets}, updated_at = ? WHERE id = ?", (*values, now, book))
        return book
    if local_id is not None:
        sets = ", ".join(f"{f} = ?" for f in fields)
        db.execute_sql(
            f"UPDATE {kind.table} SET {sets}, updated_at = ? WHERE id = ?",
            (*values, now, local_id),
        )
        return local_id
    owner = f"{kind.parent}_id" if kind.parent else "book_id"
    cols = ", ".join([owner, *fields, "updated_at"])
    marks = ", ".join("?" for _ in range(len(fields) + 2))
    cursor = db.execute_sql(
        f"INSERT INTO {kind.table} ({cols}) VALUES ({marks})",
        (parent if kind.parent else book, *values, now),
    )
    return int(cursor.lastrowid)


def delete(db: pw.SqliteDatabase, kind: Kind, local_id: int) -> None:
    if not kind.per_book:
        db.execute_sql(f"DELETE FROM {kind.table} WHERE id = ?", (local_id,))
