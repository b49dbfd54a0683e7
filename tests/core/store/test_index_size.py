"""The library's size (issue 27, item 11): the fixture books' database against the books, the
search index's definition (no positions: phrases and NEAR checked on the text), and the write-ahead
log cut back after a large transaction. Timings live in tests/bench/bench_dbsize.py."""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.store.db import WAL_LIMIT
from core.store.db_base import SOFT_HEAP_LIMIT
from core.store.frozen.index_i41 import CHUNK_INDEX
from core.store.library import Library
from core.store.models import chunk_pages, pack_chunk, pack_page, unpack_chunk, unpack_page
from core.store.page_blocks import page_content

FIXTURES = (
    "alice_in_wonderland.epub",
    "alice_in_wonderland.txt",
    "metamorphosis.epub",
    "metamorphosis.txt",
)


def test_the_fixture_books_library_is_at_most_twice_the_books(
    books_dir: Path,
) -> None:
    from core.search.vector_indexer import stop_for

    books = [books_dir / name for name in FIXTURES]
    library = Library.open(resolve_paths())
    try:
        for path in books:
            import_book(library, path)
        stop_for(library.db)  # the size an import leaves (vectors follow in the background)
        library.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        library.db.execute_sql("VACUUM")
        size = library.paths.database.stat().st_size
    finally:
        library.close()
    # 2.51x with 16 KiB pages (each of ~50 tables and indexes, most of them empty, took one);
    # 1.54x with 4 KiB pages; 1.20x with 1 KiB pages and pages stored in blocks (issue 41)
    assert size <= 2.0 * sum(p.stat().st_size for p in books)


def test_the_search_index_keeps_no_positions_yet_phrases_and_near_work(books_dir: Path) -> None:
    """detail=none makes the index about a third of detail=full (issue 41); FTS5 refuses
    phrases and NEAR on it, so they are checked on the passages' text (search.positions)."""
    from core.search import positions

    library = Library.open(resolve_paths())
    try:
        book = import_book(library, books_dir / "alice_in_wonderland.txt").book
        row = library.db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'chunk_index'"
        ).fetchone()
        assert row[0] == CHUNK_INDEX
        hits = BookSearch(library.db).search_book(book.id, '"queen of hearts"', limit=3)
        assert hits and all("queen of hearts" in h.text.lower() for h in hits)
        near = positions.execute(
            library.db,
            "SELECT count(*) FROM chunk_index WHERE chunk_index MATCH ?",
            ('NEAR("knave" "tarts", 20)',),
            positions.chunk_texts(library.db),
        )[0][0]
        assert near > 0
    finally:
        library.close()


def test_the_write_ahead_log_is_cut_back_after_a_large_transaction() -> None:
    """The log grows to the largest transaction (an import); SQLite would keep the file that
    size for as long as the library is open."""
    library = Library.open(resolve_paths())
    db = library.db
    wal = Path(f"{library.paths.database}-wal")
    try:
        db.execute_sql("CREATE TABLE scratch (data BLOB)")
        with db.atomic():
            for _ in range(2 * WAL_LIMIT // 100_000):
                db.execute_sql("INSERT INTO scratch VALUES (?)", (os.urandom(100_000),))
        assert wal.stat().st_size > WAL_LIMIT
        db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")
        db.execute_sql("INSERT INTO scratch VALUES (1)")  # the next write starts it afresh
        assert wal.stat().st_size <= WAL_LIMIT
    finally:
        library.close()


def test_every_threads_connection_shares_one_limit_on_sqlites_memory() -> None:
    """Each thread has its own connection and page cache (16 MB at most); together they stay
    near SOFT_HEAP_LIMIT (the window's memory after a big import: bench_memory.py)."""
    import threading

    library = Library.open(resolve_paths())
    seen: list[int] = []
    try:

        def read() -> None:
            seen.append(library.db.execute_sql("PRAGMA soft_heap_limit").fetchone()[0])
            library.db.close()

        worker = threading.Thread(target=read)
        worker.start()
        worker.join()
        read()
        assert seen == [SOFT_HEAP_LIMIT, SOFT_HEAP_LIMIT]
    finally:
        library.close()


def test_a_chunk_reads_from_its_pages_text_alone() -> None:
    """Reading a chunk inflates only the text of its pages, never their HTML after it."""
    text = "It was the best of times, it was the worst of times. " * 40
    html = "".join(f"<p class='x{i}'>{text}</p>" for i in range(3))
    page = pack_page(text, html)
    chunk = text[100:900]
    stored = pack_chunk(chunk, chunk_pages(text, text))
    cut = page[: len(page) - 40]  # the HTML's end gone: the page as a whole no longer reads
    with pytest.raises(zlib.error):
        unpack_page(cut)
    assert unpack_chunk(stored, cut, cut) == chunk


def test_deleting_or_re_reading_a_book_leaves_no_dead_entries_in_the_index(
    books_dir: Path,
) -> None:
    """FTS5 keeps a removed row's entries, and a "delete" entry beside them, until it merges
    its segments: without a merge, every re-read added the book's index again and deleting a
    book made the index larger."""
    from core.books.importer import reimport_book

    library = Library.open(resolve_paths())

    def index_bytes() -> int:
        row = library.db.execute_sql("SELECT sum(length(block)) FROM chunk_index_data")
        return int(row.fetchone()[0])

    try:
        kept = import_book(library, books_dir / "metamorphosis.txt").book
        book = import_book(library, books_dir / "alice_in_wonderland.txt").book
        both = index_bytes()
        reimport_book(library, book.id)
        assert index_bytes() <= both * 1.05
        library.delete_book(book.id)
        assert index_bytes() < both * 0.6
        library.db.execute_sql(
            "INSERT INTO chunk_index(chunk_index, rank) VALUES('integrity-check', 1)"
        )
        hits = BookSearch(library.db).search_book(kept.id, "Samsa", hybrid=False)
        assert hits and "Samsa" in hits[0].text
    finally:
        library.close()


def _as_before_blocks(db: Any, version: int) -> None:
    """Turn a library back into what it was before ``_page_blocks``: each page in its own
    blob (schema v8), no table of blocks, the search index's view reading those blobs."""
    from core.store.frozen.pages_v8 import CHUNK_TEXT_VIEW

    rows = db.execute_sql(
        "SELECT p.id, p.text, b.data FROM page p LEFT JOIN page_block b"
        " ON b.book_id = p.book_id AND b.first = p.block"
    ).fetchall()
    with db.atomic():
        for pid, packed, block in rows:
            text, html = page_content(packed, block)
            db.execute_sql("UPDATE page SET text = ? WHERE id = ?", (pack_page(text, html), pid))
        db.execute_sql("DROP VIEW chunk_text")
        db.execute_sql("DROP VIEW page_plain")
        db.execute_sql("DROP TABLE page_block")
        db.execute_sql("ALTER TABLE page DROP COLUMN block")
        db.execute_sql(CHUNK_TEXT_VIEW)
        db.execute_sql(f"PRAGMA user_version = {version}")


def test_an_old_library_gets_its_pages_in_blocks_and_1_kib_pages_once(
    books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41: the migration ``_page_blocks`` packs an existing library's pages (one blob
    each, 4 KiB database pages since ``_small_pages``, 16 KiB before) in blocks and rewrites
    the file with 1 KiB pages: smaller, every page's text and HTML and the search results the
    same, still WAL; when another process holds the library, the rewrite is skipped and the
    library opens all the same."""
    import sqlite3

    from core.store import db as store_db
    from core.store.migrations import MIGRATIONS, SCHEMA_VERSION, _page_blocks

    before_step = MIGRATIONS.index(_page_blocks)  # the version a library had before it
    latest = store_db.PRAGMAS["page_size"]  # the latest step's size (512 since issue 41's last)

    def old_library(home: Path, size: int = 4096) -> tuple[Path, list[tuple[int, str]], list[Any]]:
        monkeypatch.setitem(store_db.PRAGMAS, "page_size", size)
        library = Library.open(resolve_paths(home))
        book = import_book(library, books_dir / "metamorphosis.epub").book
        found = BookSearch(library.db).search_book(book.id, "sister violin", hybrid=False)
        pages = library.pages(book.id, 1, book.page_count)
        _as_before_blocks(library.db, before_step)
        library.db.execute_sql("VACUUM")
        library.close()
        monkeypatch.setitem(store_db.PRAGMAS, "page_size", latest)
        return library.paths.database, [(h.chunk_id, h.snippet) for h in found], pages

    path, before, pages = old_library(Path(os.environ["MARGIN_HOME"]) / "a")
    old_size = path.stat().st_size
    library = Library.open(resolve_paths(path.parent))
    try:
        pragma = library.db.execute_sql
        assert pragma("PRAGMA page_size").fetchone()[0] == latest
        assert pragma("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert pragma("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert pragma("SELECT count(*) FROM page WHERE block IS NULL").fetchone()[0] == 0
        book = library.list_books()[0]
        assert library.pages(book.id, 1, book.page_count) == pages
        assert any(p.html and p.html != p.text for p in pages)  # its own HTML came back
        found = BookSearch(library.db).search_book(book.id, "sister violin", hybrid=False)
        assert [(h.chunk_id, h.snippet) for h in found] == before and before
        pragma("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
    finally:
        library.close()
    assert path.stat().st_size < old_size * 0.7, (path.stat().st_size, old_size)

    # a library from before both steps (16 KiB pages) gets the latest size, not the largest
    path, _, _ = old_library(Path(os.environ["MARGIN_HOME"]) / "c", 16384)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {before_step - 1}")
    con.commit()
    con.close()
    library = Library.open(resolve_paths(path.parent))
    try:
        assert library.db.execute_sql("PRAGMA page_size").fetchone()[0] == latest
    finally:
        library.close()

    held_path, _, _ = old_library(Path(os.environ["MARGIN_HOME"]) / "b")
    other = sqlite3.connect(held_path)  # another Margin has it open
    try:
        other.execute("SELECT count(*) FROM book").fetchone()
        library = Library.open(resolve_paths(held_path.parent))
        try:
            assert library.db.execute_sql("PRAGMA page_size").fetchone()[0] == 4096
            assert library.db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert library.list_books()
        finally:
            library.close()
    finally:
        other.close()
