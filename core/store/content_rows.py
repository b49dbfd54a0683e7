"""A parsed book's rows: its pages (in blocks), contents, chunks and search index, written
through a sqlite3 cursor inside the caller's transaction. The one writer of chunks and the
index, without peewee: the library (``core.store.book_content``) and ``margin import``'s
(``core.store.import_library``) both write through it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from core.domain.book import ChunkContent as BookChunk
from core.domain.book import ParsedBook
from core.store import cjk_index
from core.store.packing import chunk_pages, pack_chunk_utf8, pack_page
from core.store.page_blocks import deflate_block, plan_blocks


def insert_content(
    cursor: sqlite3.Cursor, book_id: int, parsed: ParsedBook, chunks: Sequence[BookChunk]
) -> None:
    """Pages, contents, chunks and the search index of one book (inside a transaction):
    the one place that writes the index."""
    # Two things take most of the time, and both let go of the GIL: SQLite indexing the
    # plain text, and deflating the pages' blocks. So the deflating runs on a second
    # thread while this one fills the index; the Python parts of packing (the pages'
    # kinds, the chunks' slices) stay here, where on that thread they held the GIL
    # against the index's rows (issue 41: 10-15 ms of CPU on a 3 MB text). The chunks'
    # ids are chosen here: inside this write transaction they are the next ones,
    # contiguous and in order.
    bodies = [p.text.encode("utf-8") for p in parsed.pages]  # once, for blocks and chunks
    groups, refs = plan_blocks([(p.number, p.text, p.html) for p in parsed.pages], bodies)
    datas: list[bytes] = []
    failed: list[BaseException] = []

    def deflate() -> None:
        try:
            datas.extend(deflate_block(parts) for _, parts in groups)
        except BaseException as exc:  # (raised on this thread when it joins)
            failed.append(exc)

    # (a thread of its own: concurrent.futures is 1.5 ms of imports for one task)
    worker = threading.Thread(target=deflate, name="pack")
    worker.start()
    try:
        row = cursor.execute("SELECT coalesce(max(id), 0) FROM chunk").fetchone()
        first_id = int(row[0]) + 1
        # each passage's UTF-8 made once, for the index and for its slice of its pages (the
        # index reads a blob's bytes as the text: what sqlite3 would have made of the str)
        texts = [c.text.encode("utf-8") for c in chunks]
        cursor.executemany(
            "INSERT INTO chunk_index (rowid, text) VALUES (?, ?)",
            [(first_id + i, text) for i, text in enumerate(texts)],
        )
        cursor.executemany(
            "INSERT INTO toc_entry (book_id, ordinal, title, level, page) VALUES (?, ?, ?, ?, ?)",
            [(book_id, i, t.title, t.level, t.page) for i, t in enumerate(parsed.toc)],
        )
        chunk_texts = pack_chunks(parsed, chunks, bodies, texts)
        no_cjk = cjk_index.none_in(bodies)
    finally:
        worker.join()
    if failed:
        raise failed[0]
    if not no_cjk:  # (a chunk's text is its pages', and notes from other pages)
        cjk_index.index_rows(cursor, ((first_id + i, c.text) for i, c in enumerate(chunks)))
    page_rows = [
        (book_id, p.number, p.label, p.chapter, first, ref)
        for p, (first, ref) in zip(parsed.pages, refs, strict=True)
    ]
    block_rows = [(book_id, first, data) for (first, _), data in zip(groups, datas, strict=True)]
    if has_blocks(cursor):
        cursor.executemany(
            "INSERT INTO page_block (book_id, first, data) VALUES (?, ?, ?)", block_rows
        )
        cursor.executemany(
            "INSERT INTO page (book_id, number, label, chapter, block, text)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            page_rows,
        )
    else:  # a library at an older schema (the tests of migrations): a blob a page
        cursor.executemany(
            "INSERT INTO page (book_id, number, label, chapter, text) VALUES (?, ?, ?, ?, ?)",
            [
                (*r[:4], pack_page(p.text, p.html))
                for r, p in zip(page_rows, parsed.pages, strict=True)
            ],
        )
    cursor.executemany(
        "INSERT INTO chunk (id, book_id, ordinal, chapter, start_page, end_page, text)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (first_id + i, book_id, c.ordinal, c.chapter, c.start_page, c.end_page, blob)
            for i, (c, blob) in enumerate(zip(chunks, chunk_texts, strict=True))
        ],
    )


def has_blocks(cursor: sqlite3.Cursor) -> bool:
    """Whether pages are stored in blocks here (always, once migrated: issue 41)."""
    rows = cursor.execute("PRAGMA table_info(page)").fetchall()
    return any(r[1] == "block" for r in rows)


def pack_chunks(
    parsed: ParsedBook,
    chunks: Sequence[BookChunk],
    bodies: Sequence[bytes],
    texts: Sequence[bytes],
) -> list[bytes]:
    """Each chunk packed against its pages (``bodies``: the pages' text in UTF-8, ``texts``:
    the chunks')."""
    pages = dict(zip((p.number for p in parsed.pages), bodies, strict=True))
    get, pack, join = pages.get, pack_chunk_utf8, chunk_pages
    return [
        pack(text, get(c.start_page, b""))
        if c.start_page == c.end_page  # (chunk_pages of one page is that page)
        else pack(text, join(get(c.start_page, b""), get(c.end_page, b"")))
        for c, text in zip(chunks, texts, strict=True)
    ]
