"""Pages in blocks as the migration ``_page_blocks`` (issue 41) writes them: a frozen copy of
``core.store.page_blocks``' format when that step was written (a change there never changes
what the step does). Reads the one-blob pages it replaces (marks b"P" and b"D", schema v8).
"""

from __future__ import annotations

import zlib

import peewee as pw

from core.store.page_dict import PAGE_DICT

BLOCK = b"K"
BLOCK_PAGE = b"B"
BLOCK_BYTES = 32768
LEVEL = 3


def split_page(value: bytes) -> tuple[int, bytes, bytes]:
    """A one-blob page (schema v8: mark, kind, text length, deflate of text and HTML) as
    (kind, text bytes, HTML bytes), without decoding either."""
    if len(value) < 6 or value[:1] not in (b"P", b"D"):
        raise ValueError("not a stored page")
    unpacker = zlib.decompressobj(zdict=PAGE_DICT) if value[:1] == b"D" else zlib.decompressobj()
    data = unpacker.decompress(value[6:])
    if not unpacker.eof:
        raise zlib.error("a stored page is cut short")
    size = int.from_bytes(value[2:6], "little")
    if size > len(data):
        raise ValueError("a stored page is cut short")
    return value[1], data[:size], data[size:]


def pack(
    pages: list[tuple[int, int, bytes, bytes]],
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """``pages``: (number, kind, text, HTML) in order. Returns the blocks (first page, data)
    and for each page (the first page of its block, its descriptor)."""
    blocks: list[tuple[int, bytes]] = []
    refs: list[tuple[int, bytes]] = []
    parts: list[bytes] = []
    size, first = 0, 0
    for number, kind, body, extra in pages:
        if parts and size + len(body) + len(extra) > BLOCK_BYTES:
            packer = zlib.compressobj(LEVEL, zdict=PAGE_DICT)
            blocks.append((first, BLOCK + packer.compress(b"".join(parts)) + packer.flush()))
            parts, size = [], 0
        if not parts:
            first = number
        refs.append(
            (
                first,
                BLOCK_PAGE
                + bytes([kind])
                + size.to_bytes(4, "little")
                + len(body).to_bytes(4, "little")
                + len(extra).to_bytes(4, "little")
                + zlib.crc32(extra, zlib.crc32(body)).to_bytes(4, "little"),
            )
        )
        parts += (body, extra)
        size += len(body) + len(extra)
    if parts:
        packer = zlib.compressobj(LEVEL, zdict=PAGE_DICT)
        blocks.append((first, BLOCK + packer.compress(b"".join(parts)) + packer.flush()))
    return blocks, refs


PAGE_PLAIN_VIEW = (
    "CREATE VIEW page_plain (book_id, number, text) AS "
    "SELECT p.book_id, p.number, margin_page(p.text, b.data) FROM page p "
    "LEFT JOIN page_block b ON b.book_id = p.book_id AND b.first = p.block"
)
CHUNK_TEXT_VIEW_BLOCKS = (
    "CREATE VIEW chunk_text (id, text) AS "
    "SELECT c.id, margin_chunk(c.text, a.text, b.text) FROM chunk c "
    "LEFT JOIN page_plain a ON a.book_id = c.book_id AND a.number = c.start_page "
    "LEFT JOIN page_plain b ON b.book_id = c.book_id AND b.number = c.end_page"
)


def migrate(db: pw.SqliteDatabase) -> None:
    """The step itself: the table of blocks, the page's block, the views, and every book's
    pages packed again in blocks (the same text and HTML: the chunks, cut from the pages'
    text, and the search index stay as they are). A book whose stored pages do not unpack
    keeps them as they are (readable as far as they ever were; repair reads it again)."""
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS page_block (book_id INTEGER NOT NULL REFERENCES book (id) "
        "ON DELETE CASCADE, first INTEGER NOT NULL, data BLOB NOT NULL, "
        "PRIMARY KEY (book_id, first))"
    )
    columns = [r[1] for r in db.execute_sql("PRAGMA table_info(page)").fetchall()]
    if "block" not in columns:  # (a library whose version was set back runs this again)
        db.execute_sql("ALTER TABLE page ADD COLUMN block INTEGER")
    db.execute_sql("DROP VIEW IF EXISTS chunk_text")
    db.execute_sql("DROP VIEW IF EXISTS page_plain")
    db.execute_sql(PAGE_PLAIN_VIEW)
    db.execute_sql(CHUNK_TEXT_VIEW_BLOCKS)
    cursor = db.cursor()
    for (book_id,) in db.execute_sql(
        "SELECT DISTINCT book_id FROM page WHERE block IS NULL ORDER BY book_id"
    ).fetchall():
        rows = db.execute_sql(
            "SELECT id, number, text FROM page WHERE book_id = ? ORDER BY number", (book_id,)
        ).fetchall()
        if db.execute_sql("SELECT 1 FROM page_block WHERE book_id = ?", (book_id,)).fetchone():
            continue  # some pages in blocks already: not this step's doing, left as they are
        try:
            pages = [(number, *split_page(bytes(text))) for _, number, text in rows]
        except (ValueError, TypeError, zlib.error):
            continue
        packed, refs = pack(pages)
        cursor.executemany(
            "INSERT INTO page_block (book_id, first, data) VALUES (?, ?, ?)",
            [(book_id, first, data) for first, data in packed],
        )
        cursor.executemany(
            "UPDATE page SET block = ?, text = ? WHERE id = ?",
            [(first, ref, row[0]) for row, (first, ref) in zip(rows, refs, strict=True)],
        )
