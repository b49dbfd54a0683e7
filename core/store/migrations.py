"""Numbered forward migrations. ``PRAGMA user_version`` holds the schema version.

Each step runs in one transaction. Add a new function to ``MIGRATIONS``; never edit a
released one. A step never calls live application code (the models, the anchoring, the
message classes): what it runs is written here or frozen in ``core.store.frozen``, so an
old migration never changes meaning (tests/core/store/test_migrations_frozen.py checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from core.errors import StorageError

if TYPE_CHECKING:  # (annotations only: the window reads SCHEMA_VERSION before peewee loads)
    import peewee as pw

# The frozen copies are imported by the steps that run them: opening an up-to-date library
# (every start of the window) never loads them (issue 41).


def _v1_initial(db: pw.SqliteDatabase) -> None:
    from core.store.frozen.schema_v1 import SCHEMA_V1

    # Tables as they were in schema 1 (page.html is dropped in v8); later columns are added
    # by later steps.
    for sql in SCHEMA_V1:
        db.execute_sql(sql)


def _v2_tool_call_detail(db: pw.SqliteDatabase) -> None:
    db.execute_sql("ALTER TABLE tool_call ADD COLUMN detail TEXT")


def _v3_read_to(db: pw.SqliteDatabase) -> None:
    # Until v3 the page on screen was also the spoiler bound: start the bound there.
    db.execute_sql("ALTER TABLE book ADD COLUMN read_to INTEGER NOT NULL DEFAULT 1")
    db.execute_sql("UPDATE book SET read_to = position")


def _v4_typed_messages(db: pw.SqliteDatabase) -> None:
    # Messages were kept as the Messages API's JSON; from v4 they are Margin's typed parts.
    import json

    from core.store.frozen.messages_v4 import typed_content

    db.execute_sql("ALTER TABLE run ADD COLUMN error_hint TEXT NOT NULL DEFAULT ''")
    rows = db.execute_sql(
        "SELECT m.id, m.role, m.kind, m.content, m.text, m.selection_text, m.selection_page,"
        " c.book_id FROM message m JOIN conversation c ON c.id = m.conversation_id"
    ).fetchall()
    for mid, role, kind, content, text, sel_text, sel_page, book_id in rows:
        try:
            raw = json.loads(content) if content else []
        except ValueError:
            raw = []
        typed = typed_content(
            role,
            kind,
            raw,
            text=text or "",
            selection_text=sel_text,
            selection_page=sel_page,
            book_id=book_id,
        )
        db.execute_sql(
            "UPDATE message SET content = ? WHERE id = ?",
            (json.dumps(typed, ensure_ascii=False), mid),
        )


def _v5_parser_version(db: pw.SqliteDatabase) -> None:
    # Books imported before v5 were cut into pages by the older readers (contents entries
    # inside a file all got the file's first page): they stay as they are, marked 1, and
    # `margin reimport` / Book › Re-read reads them again.
    db.execute_sql("ALTER TABLE book ADD COLUMN parser_version INTEGER NOT NULL DEFAULT 1")


def _v6_run_owner(db: pw.SqliteDatabase) -> None:
    # Runs record the process that writes them, so start-up tidying marks "interrupted"
    # only answers whose process is gone, never another live process's answer.
    db.execute_sql("ALTER TABLE run ADD COLUMN pid INTEGER")
    db.execute_sql("ALTER TABLE run ADD COLUMN host TEXT NOT NULL DEFAULT ''")


CHUNK_INDEX_V6 = (
    "CREATE VIRTUAL TABLE chunk_index USING fts5(text, content='chunk', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')"
)


def _v7_single_copy_of_text(db: pw.SqliteDatabase) -> None:
    from core.store.frozen import pages_v8

    # The search index kept its own copy of every chunk's text: from v6 it reads the text
    # from ``chunk`` (FTS5 external content) and is rebuilt from it. Page HTML, read one page
    # at a time, is stored compressed. Together: the database is about half its former size.
    db.execute_sql("DROP TABLE IF EXISTS chunk_index")
    db.execute_sql(CHUNK_INDEX_V6)
    db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")
    rows = db.execute_sql("SELECT id, html, text FROM page WHERE html IS NOT NULL").fetchall()
    db.execute_sql("ALTER TABLE page RENAME COLUMN html TO html_v5")
    db.execute_sql("ALTER TABLE page ADD COLUMN html BLOB")
    db.execute_sql("ALTER TABLE page DROP COLUMN html_v5")
    cursor = db.cursor()
    cursor.executemany(
        "UPDATE page SET html = ? WHERE id = ?",
        [
            (pages_v8.pack_text(html, text) if isinstance(html, str) else html, pid)
            for pid, html, text in rows
        ],
    )


def _v8_compressed_text(db: pw.SqliteDatabase) -> None:
    from core.store.frozen import pages_v8

    # Page and chunk text were stored as plain text (most of the file): from v8 a page's
    # text and HTML are one compressed blob, and a chunk is compressed against the pages it
    # was cut from (models.pack_page, pack_chunk). SQL reads them with functions that
    # core.store.db registers on every connection; the search index reads chunk text through
    # the view chunk_text. The index holds the same terms; only its content source changes.
    pages_v8.compress_text(db)


def _v9_spoiler_stats(db: pw.SqliteDatabase) -> None:
    # The spoiler check's word statistics of a book (core.agent.spoilers), counted once and
    # kept: building them reads the whole book. Gone with the book or its re-read content.
    db.execute_sql(
        "CREATE TABLE spoiler_stats (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, version INTEGER NOT NULL, data BLOB NOT NULL)"
    )


def _v10_relative_copies(db: pw.SqliteDatabase) -> None:
    # Book copies were stored by absolute path: a moved data folder (new machine, new user
    # name, a synced folder) lost them, or silently read an old folder left behind. From now
    # on a copy in the library's books folder is stored as "books/<sha256><suffix>",
    # relative to the data folder, wherever that folder was when it was written.
    rows = db.execute_sql("SELECT id, sha256, file_path FROM book WHERE file_path != ''")
    updates = []
    for book_id, sha256, file_path in rows.fetchall():
        path = PurePosixPath(file_path)
        if path.is_absolute() and path.parent.name == "books" and path.stem == sha256:
            updates.append((f"books/{path.name}", book_id))
    db.cursor().executemany("UPDATE book SET file_path = ? WHERE id = ?", updates)


def _v11_reading_state(db: pw.SqliteDatabase) -> None:
    # A book's reading state beside its page and bound (core.store.reading_state): the first
    # line on screen, the PDF zoom, the side panel, per-book view settings. It was kept in
    # reader.ini, where it outlived the book; here it goes with it.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS reading_state (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, data TEXT NOT NULL, updated_at TEXT)"
    )


def _v12_ids_never_reused(db: pw.SqliteDatabase) -> None:
    # SQLite hands a deleted row's id to the next row unless the key is AUTOINCREMENT: the
    # next book or conversation then inherited the deleted one's files and remembered state.
    # A column cannot become AUTOINCREMENT in place: each table is rebuilt with the same
    # columns, rows and indexes (foreign keys off meanwhile, so the copy's DROP TABLE does
    # not cascade to the children; they are checked afterwards).
    from core.store.frozen.autoincrement_v12 import fk_violations, rebuild_autoincrement

    before = fk_violations(db)
    for table in ("book", "conversation"):
        rebuild_autoincrement(db, table)
    if fk_violations(db) - before:
        raise StorageError(
            "migration_failed",
            "Updating the library lost the link between books and their pages or "
            "conversations; nothing was changed.",
            hint="Please report this; the library stays as it was.",
        )


_v12_ids_never_reused.without_foreign_keys = True  # type: ignore[attr-defined]


def _v13_chunk_vectors(db: pw.SqliteDatabase) -> None:
    # Dense vectors of a book's chunks for search by meaning (core.search.vectors): one row
    # per book, int8 numbers for its contiguous chunk ids first_chunk … first_chunk+count-1.
    # Books imported before this step have none until the background indexing gives them.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS chunk_vectors (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, "
        "first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL)"
    )


def _highlight_style(db: pw.SqliteDatabase) -> None:
    # How a highlight is drawn besides its colour: "highlight" (a background), "underline" or
    # "strike" (core.store.highlight_style). Self-contained: adds the column only if missing.
    columns = {row[1] for row in db.execute_sql("PRAGMA table_info(highlight)").fetchall()}
    if "style" not in columns:
        db.execute_sql("ALTER TABLE highlight ADD COLUMN style TEXT NOT NULL DEFAULT 'highlight'")


def _text_quote_anchors(db: pw.SqliteDatabase) -> None:
    from core.store.frozen.quotes_v15 import backfill

    # Highlights, notes, citations and threads point into a book by its words (a W3C
    # TextQuote with a page and offset hint), so a book read again keeps them on their text.
    for table in ("highlight", "note", "conversation"):
        columns = {row[1] for row in db.execute_sql(f"PRAGMA table_info({table})")}
        if "quote" not in columns:
            db.execute_sql(f"ALTER TABLE {table} ADD COLUMN quote TEXT")
    backfill(db)


def _companions(db: pw.SqliteDatabase) -> None:
    # Companions (core.companions, issue 25): what X-Ray read on each page (companion_page,
    # one row per book, kind and page) and what was made from it (companion_item: the X-Ray
    # as of a bound, chapter recaps, model notes, flashcards), both gone with the book.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS companion_page (book_id INTEGER NOT NULL "
        "REFERENCES book (id) ON DELETE CASCADE, kind TEXT NOT NULL, page INTEGER NOT NULL, "
        "data BLOB NOT NULL, PRIMARY KEY (book_id, kind, page))"
    )
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS companion_item (book_id INTEGER NOT NULL "
        "REFERENCES book (id) ON DELETE CASCADE, kind TEXT NOT NULL, key TEXT NOT NULL, "
        "version INTEGER NOT NULL, data BLOB NOT NULL, updated_at TEXT NOT NULL, "
        "PRIMARY KEY (book_id, kind, key))"
    )


def _sync_and_sources(db: pw.SqliteDatabase) -> None:
    # Sync between the reader's computers (core.sync.engine, issue 42): every synced record's
    # id across devices (uid), its clock (Lamport counter and device), the version it was
    # edited from (base), the hash and payload last synced, whether it waits to be sent
    # (outbox) or for its book (applied = 0); the change files already read; counters.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS sync_record (uid TEXT PRIMARY KEY, kind TEXT NOT NULL, "
        "local_id INTEGER, book TEXT NOT NULL DEFAULT '', counter INTEGER NOT NULL, "
        "device TEXT NOT NULL, base TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL DEFAULT '', "
        "payload TEXT NOT NULL DEFAULT '{}', deleted INTEGER NOT NULL DEFAULT 0, "
        "outbox INTEGER NOT NULL DEFAULT 0, applied INTEGER NOT NULL DEFAULT 1)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS sync_record_local ON sync_record (kind, local_id)")
    db.execute_sql("CREATE TABLE IF NOT EXISTS sync_seen (name TEXT PRIMARY KEY)")
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS sync_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    # Books from an outside source (core.sources.calibre): which library and book they are,
    # and what Margin has no column for (series, tags, the source's cover and change stamp).
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS source_book (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, source TEXT NOT NULL, key TEXT NOT NULL, "
        "series TEXT NOT NULL DEFAULT '', series_index REAL NOT NULL DEFAULT 0, "
        "tags TEXT NOT NULL DEFAULT '[]', cover TEXT NOT NULL DEFAULT '', "
        "modified TEXT NOT NULL DEFAULT '', UNIQUE (source, key))"
    )


# Indexes another index already leads with: (book_id) beside (book_id, number) on page and
# (book_id, end_page) on chunk. SQLite uses the longer one for the same lookups and for the
# cascade on deleting a book; the short ones only cost space (0.3 MB for a 16 MiB EPUB).
_DUPLICATE_INDEXES = (
    ("page_book_id", "page_book_id_number"),
    ("chunk_book_id", "chunk_book_id_end_page"),
)


def _no_duplicate_indexes(db: pw.SqliteDatabase) -> None:
    names = {r[0] for r in db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index'")}
    for short, longer in _DUPLICATE_INDEXES:
        if longer in names:  # never drop the only index of a foreign key
            db.execute_sql(f'DROP INDEX IF EXISTS "{short}"')


def _ocr_text(db: pw.SqliteDatabase) -> None:
    # Text recognised on a book's picture pages (core.books.ocr), kept on its own with the
    # SHA-256 of the file it was read from, so reading the book again keeps it.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS ocr_text (book_id INTEGER NOT NULL REFERENCES book (id) "
        "ON DELETE CASCADE, number INTEGER NOT NULL, sha256 TEXT NOT NULL, text TEXT NOT NULL, "
        "PRIMARY KEY (book_id, number))"
    )


def _sentence_vectors(db: pw.SqliteDatabase) -> None:
    # The sentence encoder's vectors of a book's chunks (core.search.sentence_vectors), laid
    # out as chunk_vectors: one row per book, int8 numbers for its contiguous chunk ids.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS sentence_vectors (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, "
        "first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL)"
    )


def _sentence_windows(db: pw.SqliteDatabase) -> None:
    # The sentence encoder's vectors of whole chunks, in windows (core.search.sentence_vectors):
    # one row per book, the windows of its first ``done`` chunks (``windows``: how many each
    # chunk has, one byte each; ``data``: 4-bit vectors), filled in reading order. The one
    # vector per chunk of before (sentence_vectors) serves deep search until a book's
    # windows are all there, then its row goes.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS sentence_windows (book_id INTEGER PRIMARY KEY "
        "REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, "
        "first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL, "
        "windows BLOB NOT NULL, data BLOB NOT NULL)"
    )


def _cjk_index(db: pw.SqliteDatabase) -> None:
    from core.store.frozen import cjk_grams

    # Chinese and Japanese text, which has no spaces between words, cut into pairs of
    # characters beside the word index (core.search.cjk), so any word or phrase is found.
    # Only chunks with such text have a row; the books already there are cut here.
    db.execute_sql(
        "CREATE VIRTUAL TABLE IF NOT EXISTS cjk_index USING fts5(grams, "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    last = 0
    while True:  # a big library need not be held in memory at once
        rows = db.execute_sql(
            "SELECT id, text FROM chunk_text WHERE id > ? ORDER BY id LIMIT 500", (last,)
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        db.cursor().executemany(
            "INSERT INTO cjk_index (rowid, grams) VALUES (?, ?)",
            [(i, cjk_grams.grams(t)) for i, t in rows if t and cjk_grams.RUN.search(t)],
        )


def _small_pages(db: pw.SqliteDatabase) -> None:
    # Issue 41: with 16 KiB pages each of a library's ~50 tables and indexes, most of them
    # empty or nearly, took 16 KiB (0.8 MB before the first book, 2.5x the fixture books);
    # with SQLite's default 4 KiB pages, 1.5x (tests/bench/bench_dbsize.py). A page size
    # changes only by rewriting the file (VACUUM, outside a transaction and outside WAL):
    # ``migrate`` does it after this step, as ``page_size`` asks. The search index keeps its
    # options: the text is already stored once (external content, v7), and phrase queries
    # need its positions (detail=full; tests/bench/bench_fts_detail.py).
    del db


_small_pages.page_size = 4096  # type: ignore[attr-defined]


def _page_blocks(db: pw.SqliteDatabase) -> None:
    from core.store.frozen import page_blocks_i41

    # Issue 41: a book's pages are stored in blocks of consecutive pages compressed together
    # (core.store.page_blocks; 15 % smaller than page by page, and no half-empty database
    # page beside each 1 KiB page), and the file gets 1 KiB pages (``migrate`` rewrites it
    # after this step): each of a library's ~50 tables and indexes takes a page at least, an
    # empty library 224 KiB with 4 KiB pages, 66 KiB with 1 KiB. SQL reads page text through
    # the view page_plain; the search index's view chunk_text reads it from there
    # (core/store/frozen/page_blocks_i41.py).
    page_blocks_i41.migrate(db)


_page_blocks.page_size = 1024  # type: ignore[attr-defined]


def _index_without_positions(db: pw.SqliteDatabase) -> None:
    from core.store.frozen import index_i41

    # Issue 41: the search index keeps which passages hold each word, not where (FTS5
    # detail=none, a third of the size): phrases and NEAR are checked on the passages' own
    # text (core/search/positions.py). The view chunk_text joins pages and blocks itself,
    # so that reading one passage no longer decodes the library's every page. ``migrate``
    # rewrites the file after this step with 512-byte pages (core.store.db.PRAGMAS), which
    # gives the old index's pages back too.
    index_i41.migrate(db)


_index_without_positions.page_size = 512  # type: ignore[attr-defined]


MIGRATIONS: tuple[Callable[[pw.SqliteDatabase], None], ...] = (
    _v1_initial,
    _v2_tool_call_detail,
    _v3_read_to,
    _v4_typed_messages,
    _v5_parser_version,
    _v6_run_owner,
    _v7_single_copy_of_text,
    _v8_compressed_text,
    _v9_spoiler_stats,
    _v10_relative_copies,
    _v11_reading_state,
    _v12_ids_never_reused,
    _v13_chunk_vectors,
    _highlight_style,
    _text_quote_anchors,
    _companions,
    _no_duplicate_indexes,
    _ocr_text,
    _sentence_vectors,
    _sentence_windows,
    _sync_and_sources,
    _cjk_index,
    _small_pages,
    _page_blocks,
    _index_without_positions,
)
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(db: pw.SqliteDatabase) -> int:
    return int(db.execute_sql("PRAGMA user_version").fetchone()[0])


def migrate(db: pw.SqliteDatabase, *, one_by_one: bool = False, until: int = 0) -> int:
    """Bring the database to ``SCHEMA_VERSION`` (``until``: to that version; the tests);
    returns the version it started at. A new file gets the schema of
    ``core.store.frozen.new_library`` in one transaction and the steps after it (each step
    from the first with ``one_by_one``: the tests)."""
    start = current_version(db)
    if start > SCHEMA_VERSION:
        raise StorageError(
            "newer_schema",
            f"This library was written by a newer version of Margin (schema {start}, "
            f"this version knows up to {SCHEMA_VERSION}).",
            hint="Update Margin to open it.",
        )
    last = until or SCHEMA_VERSION
    done = start
    if start == 0 and not one_by_one:
        done = _new_library(db, last)
    for version in range(done + 1, last + 1):
        step = MIGRATIONS[version - 1]
        # a step that rebuilds a parent table runs with foreign keys off (SQLite's way:
        # they cannot be switched inside a transaction) and checks them itself
        unlinked = getattr(step, "without_foreign_keys", False)
        if unlinked:
            db.execute_sql("PRAGMA foreign_keys = OFF")
        try:
            with db.atomic():
                step(db)
                db.execute_sql(f"PRAGMA user_version = {version}")
        finally:
            if unlinked:
                db.execute_sql("PRAGMA foreign_keys = ON")
    if start == 0:
        return start  # a new file: made with today's page size (core.store.db.PRAGMAS)
    from core.store.frozen.rewrite import reclaim, repage

    pages = [getattr(MIGRATIONS[v - 1], "page_size", 0) for v in range(start + 1, last + 1)]
    pages = [size for size in pages if size]
    if pages:
        repage(db, pages[-1])  # the latest step's size (a new library is made with it)
    elif 0 < start < 8 <= SCHEMA_VERSION:
        reclaim(db)  # compressing the text freed about half the file once
    return start


def _new_library(db: pw.SqliteDatabase, last: int) -> int:
    """An empty file made a library of the frozen schema's version in one transaction (at
    most ``last``); returns the version it is at."""
    from core.store.frozen import new_library

    if last < new_library.VERSION:
        return 0
    with db.atomic():
        for sql in new_library.STATEMENTS:
            db.execute_sql(sql)
        db.execute_sql(f"PRAGMA user_version = {new_library.VERSION}")
    return new_library.VERSION
