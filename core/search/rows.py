"""Reading passages (chunks) back from the library: a book's chunk id range and chunk rows
with their text unpacked from their pages. Written against anything with ``execute_sql``
(peewee's database, or ``core.search.quick``'s plain ``sqlite3`` reader), without peewee."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from core.store.packing import page_text, unpack_chunk

RANGE = "SELECT min(id), max(id) FROM chunk WHERE book_id = ?"
RANGE_UNTIL = (
    "SELECT min(id), max(CASE WHEN end_page <= ? THEN id END) FROM chunk WHERE book_id = ?"
)


class Executes(Protocol):
    """What reading needs of a database: peewee's ``execute_sql`` (a cursor back)."""

    def execute_sql(self, sql: str, params: Any = ...) -> Any: ...


def chunk_range(
    db: Executes, book_id: int, until_page: int | None = None
) -> tuple[int, int] | None:
    """The first and last chunk id of a book (the last within ``until_page``)."""
    if until_page is None:
        row = db.execute_sql(RANGE, (book_id,)).fetchone()
    else:
        row = db.execute_sql(RANGE_UNTIL, (until_page, book_id)).fetchone()
    if row is None or row[0] is None or row[1] is None:
        return None
    return int(row[0]), int(row[1])


def page_text_of(blob: Any) -> str:
    """A stored page's text (no cache; its HTML is not inflated)."""
    return page_text(blob)


def chunk_rows(
    db: Executes,
    ids: list[int],
    book_id: int | None,
    page_text: Callable[[Any], str] = page_text_of,
) -> dict[int, tuple[Any, ...]]:
    """(id, book, first page, last page, chapter, text) of chunks (of one book, unless
    ``book_id`` is None). Each page is unpacked once (by ``page_text``), however many of the
    chunks were cut from it (the view ``chunk_text`` would unpack two pages per chunk)."""
    marks = ",".join("?" * len(ids))
    chunks = db.execute_sql(
        "SELECT id, book_id, start_page, end_page, chapter, text FROM chunk "
        f"WHERE id IN ({marks})" + ("" if book_id is None else " AND book_id = ?"),
        (*ids,) if book_id is None else (*ids, book_id),
    ).fetchall()
    wanted = sorted({(c[1], n) for c in chunks for n in (c[2], c[3])})
    if not wanted:
        return {}
    pages: dict[tuple[int, int], str] = {}
    for owner in sorted({b for b, _ in wanted}):
        numbers = [n for b, n in wanted if b == owner]
        for number, blob in db.execute_sql(
            "SELECT number, text FROM page_plain WHERE book_id = ? AND number IN "
            f"({','.join('?' * len(numbers))})",
            (owner, *numbers),
        ).fetchall():
            pages[(owner, int(number))] = page_text(blob)
    return {
        int(c[0]): (
            *c[:5],
            unpack_chunk(c[5], pages.get((c[1], c[2])), pages.get((c[1], c[3]))),
        )
        for c in chunks
    }


LENGTHS = "SELECT id, sz FROM chunk_index_docsize WHERE id IN ({})"
K1, B = 1.2, 0.75  # Okapi BM25's usual constants (FTS5's bm25() and ranking.bm25 use them)


AVERAGES = "SELECT block FROM chunk_index_data WHERE id = 1"


def _varint_at(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at`` in ``data`` and where the next starts."""
    value = 0
    for i in range(at, min(at + 8, len(data))):
        value = (value << 7) | (data[i] & 0x7F)
        if data[i] < 0x80:
            return value, i + 1
    end = at + 8
    return ((value << 8) | data[end], end + 1) if end < len(data) else (value, end)


def index_averages(db: Executes) -> tuple[int, int]:
    """FTS5's own count of passages and of their words (its record of averages)."""
    row = db.execute_sql(AVERAGES).fetchone()
    if not row or not row[0]:
        return 0, 0
    data = bytes(row[0])
    rows, at = _varint_at(data, 0)
    tokens, _ = _varint_at(data, at)
    return rows, tokens


def idf(total: int, holding: int) -> float:
    """FTS5 bm25()'s weight of a term held by ``holding`` of ``total`` passages."""
    value = math.log((total - holding + 0.5) / (holding + 0.5)) if total else 0.0
    return value if value > 0 else 1e-6


def index_lengths(db: Executes, ids: list[int]) -> dict[int, int]:
    """How many words the search index counted in each of the chunks ``ids`` (FTS5 keeps
    them beside the index, without the passages' text)."""
    found: dict[int, int] = {}
    for start in range(0, len(ids), 10000):
        marks = ",".join(str(int(i)) for i in ids[start : start + 10000])
        for chunk_id, size in db.execute_sql(LENGTHS.format(marks)).fetchall():
            if size:
                found[int(chunk_id)] = _varint_at(bytes(size), 0)[0]
    return found


def once_bm25(weight: float, length: float, mean: float, count: int = 1) -> float:
    """BM25 of a chunk holding terms of summed ``weight`` ``count`` times each, for its
    length (FTS5's bm25() for one term, when ``count`` is its count in the chunk)."""
    return weight * count * (K1 + 1) / (count + K1 * (1 - B + B * length / max(mean, 1.0)))
