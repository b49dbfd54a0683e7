"""Stored page and chunk text as migrations v7 and v8 wrote it, and as v15 reads it.

Frozen copies of ``core.store.models``' packing as it was when those steps were written:
a change there (a new format, a new mark) never changes what an old migration does. The
preset dictionary is the stored format itself (``core.store.page_dict`` never changes: the
pages packed against it could not be read otherwise), so it is shared, not copied.
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.store.page_dict import PAGE_DICT

if TYPE_CHECKING:
    import peewee as pw

PLAIN_HTML = b""  # stored for page HTML that is just the text's paragraphs (see plain_html)


def plain_html(text: str) -> str:
    """The HTML of a page that is nothing but its text's paragraphs."""
    return "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))


def pack_text(value: str | None, text: str | None = None) -> bytes | None:
    """Page HTML as stored (schema v7): compressed, or ``PLAIN_HTML`` when it is exactly
    ``plain_html(text)`` (plain-text books) so it is not kept twice."""
    if value is None:
        return None
    if text is not None and value and value == plain_html(text):
        return PLAIN_HTML
    return zlib.compress(value.encode("utf-8"), 6)


def unpack_text(value: bytes | str | None) -> str | None:
    """Stored HTML back ("" for ``PLAIN_HTML``: the caller rebuilds it from the text); rows
    written before v6 hold plain text."""
    if value is None or isinstance(value, str):
        return value
    if value == PLAIN_HTML:
        return ""
    return zlib.decompress(value).decode("utf-8")


CHUNK_BLOB = b"C"
# A chunk that is word for word a stretch of its pages (every chunk the chunker cuts) is just
# where that stretch starts and how long it is, and its CRC-32 so that damage is noticed:
# b"S", start, length, CRC (13 bytes, where compressed it took 40).
CHUNK_SLICE = b"S"
_PROBE = 24  # bytes of the chunk's start looked up in its pages
_WINDOW = 32768  # zlib looks back 32 KiB at most


def chunk_pages(first_page: str | bytes, last_page: str | bytes) -> bytes:
    """The text a chunk is packed against: its first page, and its last when that differs."""
    first = first_page.encode("utf-8") if isinstance(first_page, str) else first_page
    last = last_page.encode("utf-8") if isinstance(last_page, str) else last_page
    return first if first == last else first + b"\n\n" + last


def pack_chunk(text: str, pages: bytes) -> bytes:
    """``pages`` is ``chunk_pages(first, last)`` of the chunk's first and last page."""
    body = text.encode("utf-8")
    at = pages.find(body[:_PROBE]) if body else -1
    where, tries = at, 0
    while where >= 0 and tries < 8:  # (a page that repeats itself holds the start twice)
        if pages.startswith(body, where):
            head = CHUNK_SLICE + where.to_bytes(4, "little") + len(body).to_bytes(4, "little")
            return head + zlib.crc32(body).to_bytes(4, "little")
        where, tries = pages.find(body[:_PROBE], where + 1), tries + 1
    if at >= 0:  # the usual case: the stretch the chunk was cut from, with some slack
        start, size = at, min(len(body) + 512, _WINDOW)
    else:
        start = max(0, len(pages) - _WINDOW)
        size = len(pages) - start
    window = pages[start : start + size]
    packer = zlib.compressobj(1, zdict=window) if window else zlib.compressobj(1)
    head = CHUNK_BLOB + start.to_bytes(4, "little") + len(window).to_bytes(4, "little")
    return head + packer.compress(body) + packer.flush()


PAGE_BLOB = b"P"
PAGE_BLOB_DICT = b"D"
_NO_HTML, _PLAIN, _OWN_HTML = 0, 1, 2
_PAGE_LEVEL = 3  # as fast as level 1 without it; level 6 packs 3 % smaller in twice the time


def pack_page(text: str, html: str | None) -> bytes:
    body = text.encode("utf-8")
    if html is None:
        kind, extra = _NO_HTML, b""
    elif html == "" or html == plain_html(text):
        kind, extra = _PLAIN, b""
    else:
        kind, extra = _OWN_HTML, html.encode("utf-8")
    head = PAGE_BLOB_DICT + bytes([kind]) + len(body).to_bytes(4, "little")
    packer = zlib.compressobj(_PAGE_LEVEL, zdict=PAGE_DICT)
    return head + packer.compress(body + extra) + packer.flush()


def _unpacker(mark: bytes) -> Any:
    if mark == PAGE_BLOB_DICT:
        return zlib.decompressobj(zdict=PAGE_DICT)
    if mark == PAGE_BLOB:
        return zlib.decompressobj()
    raise ValueError("not a stored page")


def unpack_page(value: bytes | str | None) -> tuple[str, str | None]:
    """A stored page's text and HTML (``plain_html(text)`` for pages that are just their
    text's paragraphs, ``None`` for pages without HTML)."""
    if value is None:
        return "", None
    if isinstance(value, str):  # a row not yet migrated to v8
        return value, None
    if isinstance(value, memoryview):
        value = bytes(value)
    if len(value) < 6:
        raise ValueError("not a stored page")
    unpacker = _unpacker(value[:1])
    kind, size = value[1], int.from_bytes(value[2:6], "little")
    data = unpacker.decompress(value[6:])
    if not unpacker.eof:
        raise zlib.error("a stored page is cut short")
    text = data[:size].decode("utf-8")
    if kind == _NO_HTML:
        return text, None
    if kind == _PLAIN:
        return text, plain_html(text)
    return text, data[size:].decode("utf-8")


def page_text(value: bytes | str | None) -> str:
    """A stored page's text. Registered on every connection as the SQL function
    ``margin_text`` for SQL that reads page text. Only the text is inflated, not the HTML
    stored after it."""
    if isinstance(value, memoryview):
        value = bytes(value)
    if not isinstance(value, bytes) or value[:1] not in (PAGE_BLOB, PAGE_BLOB_DICT):
        return unpack_page(value)[0]
    size = int.from_bytes(value[2:6], "little")
    if size == 0:  # (a max_length of 0 would mean "no limit")
        return ""
    return _unpacker(value[:1]).decompress(value[6:], size).decode("utf-8")


CHUNK_TEXT_VIEW = (
    "CREATE VIEW chunk_text (id, text) AS "
    "SELECT c.id, margin_chunk(c.text, a.text, b.text) FROM chunk c "
    "LEFT JOIN page a ON a.book_id = c.book_id AND a.number = c.start_page "
    "LEFT JOIN page b ON b.book_id = c.book_id AND b.number = c.end_page"
)
CHUNK_INDEX_V8 = (
    "CREATE VIRTUAL TABLE chunk_index USING fts5(text, content='chunk_text', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')"
)


def compress_text(db: pw.SqliteDatabase) -> None:
    """Migration v8's step (core.store.migrations._v8_compressed_text)."""
    db.execute_sql("DROP TABLE IF EXISTS chunk_index")
    cursor = db.cursor()

    def batches(sql: str) -> Iterator[list[Any]]:
        last = 0
        while True:  # a big library need not be held in memory at once
            rows = db.execute_sql(sql, (last,)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield rows

    # chunks first: they are packed against their pages' plain text, which is still there
    for (book_id,) in db.execute_sql("SELECT id FROM book").fetchall():
        texts = dict(db.execute_sql("SELECT number, text FROM page WHERE book_id = ?", (book_id,)))
        rows = db.execute_sql(
            "SELECT id, text, start_page, end_page FROM chunk WHERE book_id = ?", (book_id,)
        ).fetchall()
        cursor.executemany(
            "UPDATE chunk SET text = ? WHERE id = ?",
            [
                (
                    pack_chunk(text, chunk_pages(texts.get(first, ""), texts.get(last, ""))),
                    rid,
                )
                for rid, text, first, last in rows
            ],
        )
    for rows in batches("SELECT id, text, html FROM page WHERE id > ? ORDER BY id LIMIT 1000"):
        cursor.executemany(
            "UPDATE page SET text = ?, html = NULL WHERE id = ?",
            [(pack_page(text, unpack_text(html)), rid) for rid, text, html in rows],
        )
    db.execute_sql("ALTER TABLE page DROP COLUMN html")
    db.execute_sql(CHUNK_TEXT_VIEW)
    db.execute_sql(CHUNK_INDEX_V8)
    db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")
