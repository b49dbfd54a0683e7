"""Reading passages (chunks) back from the library: a book's chunk id range and chunk rows
with their text unpacked from their pages. Written against anything with ``execute_sql``
(peewee's database, or ``core.search.quick``'s plain ``sqlite3`` reader), without peewee."""

from __future__ import annotations

import math
from typing import Any, Protocol

from core.store.packing import chunk_from, chunk_pages
from core.store.page_blocks import block_texts, margin_page

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


CHUNKS = "SELECT id, book_id, start_page, end_page, chapter, text FROM chunk WHERE id IN ({})"
# the pages the chunks were cut from: each page's descriptor (or its own blob, a page stored
# before blocks) and its block's rowid; the blocks are read once each (``BLOCKS``)
PAGES = (
    "SELECT DISTINCT p.book_id, p.number, p.text, b.rowid FROM chunk c JOIN page p "
    "ON p.book_id = c.book_id AND p.number IN (c.start_page, c.end_page) "
    "LEFT JOIN page_block b ON b.book_id = p.book_id AND b.first = p.block WHERE c.id IN ({})"
)
BLOCKS = "SELECT rowid, data FROM page_block WHERE rowid IN ({})"


def chunk_rows(db: Executes, ids: list[int], book_id: int | None) -> dict[int, tuple[Any, ...]]:
    """(id, book, first page, last page, chapter, text) of chunks (of one book, unless
    ``book_id`` is None). Their pages are read with their blocks (``page_texts``): each
    block inflated once, as far as the last page needed (the view ``chunk_text`` would
    inflate a whole block for each of a chunk's two pages)."""
    if not ids:
        return {}
    marks = ",".join(str(int(i)) for i in ids)
    chunks = db.execute_sql(CHUNKS.format(marks)).fetchall()
    if book_id is not None:
        chunks = [c for c in chunks if c[1] == book_id]
    if not chunks:
        return {}
    pages = page_texts(db, ",".join(str(int(c[0])) for c in chunks))
    return {
        int(c[0]): (
            *c[:5],
            chunk_from(
                c[5], chunk_pages(pages.get((c[1], c[2]), b""), pages.get((c[1], c[3]), b""))
            ),
        )
        for c in chunks
    }


def page_texts(db: Executes, marks: str) -> dict[tuple[int, int], bytes]:
    """(book, page number) → text (UTF-8) of the pages the chunks ``marks`` (their ids, joined by
    commas) were cut from."""
    rows = db.execute_sql(PAGES.format(marks)).fetchall()
    pages: dict[tuple[int, int], bytes] = {}
    held: dict[int, list[tuple[tuple[int, int], Any]]] = {}  # block rowid → its pages
    for book, number, ref, block in rows:
        if block is None:  # a page stored alone (or its block is missing: told)
            pages[(book, number)] = margin_page(ref, None).encode("utf-8")
        else:
            held.setdefault(int(block), []).append(((book, number), ref))
    if held:
        for block, data in db.execute_sql(BLOCKS.format(",".join(str(b) for b in held))).fetchall():
            refs = held.pop(int(block))
            pages.update(
                zip([k for k, _ in refs], block_texts(data, [r for _, r in refs]), strict=True)
            )
    if held:
        raise ValueError("a stored page's block is missing")
    return pages


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


# the passages a MATCH expression finds, each with its length as the index keeps it
TERM_LENGTHS = (
    "SELECT chunk_index.rowid, d.sz FROM chunk_index LEFT JOIN chunk_index_docsize d "
    "ON d.id = chunk_index.rowid WHERE chunk_index MATCH ?"
)


def stored_length(size: Any) -> int | None:
    """A passage's length in words from its record in ``chunk_index_docsize`` (None when
    it has none), as ``index_lengths`` reads it."""
    if not size:
        return None
    first = size[0]  # a passage's length takes one or two bytes: read here
    if first < 0x80:
        return int(first)
    if len(size) > 1 and size[1] < 0x80:
        return (first & 0x7F) << 7 | size[1]
    return _varint_at(bytes(size), 0)[0]


def index_lengths(db: Executes, ids: list[int]) -> dict[int, int]:
    """How many words the search index counted in each of the chunks ``ids`` (FTS5 keeps
    them beside the index, without the passages' text)."""
    found: dict[int, int] = {}
    for start in range(0, len(ids), 10000):
        marks = ",".join(str(int(i)) for i in ids[start : start + 10000])
        for chunk_id, size in db.execute_sql(LENGTHS.format(marks)).fetchall():
            if not size:
                continue
            first = size[0]  # a passage's length takes one or two bytes: read here
            if first < 0x80:
                found[chunk_id] = first
            elif len(size) > 1 and size[1] < 0x80:
                found[chunk_id] = (first & 0x7F) << 7 | size[1]
            else:
                found[chunk_id] = _varint_at(bytes(size), 0)[0]
    return found


def once_bm25(weight: float, length: float, mean: float, count: int = 1) -> float:
    """BM25 of a chunk holding terms of summed ``weight`` ``count`` times each, for its
    length (FTS5's bm25() for one term, when ``count`` is its count in the chunk)."""
    return weight * count * (K1 + 1) / (count + K1 * (1 - B + B * length / max(mean, 1.0)))
