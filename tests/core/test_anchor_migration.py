"""The anchors' migration gives an older library's highlights, notes and citations their
quotes, from the text they point at (core/store/migrations.py ``_text_quote_anchors``)."""

from __future__ import annotations

import json
from pathlib import Path

import peewee as pw

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store import migrations
from core.store import models as m
from core.store.anchors import TextQuote, collapse, stored_to_view
from core.store.db import PRAGMAS
from core.store.library import Library
from core.store.migrations import MIGRATIONS, SCHEMA_VERSION, current_version
from core.store.page_blocks import margin_page


def _library_before_anchors(path: Path, books_dir: Path) -> tuple[int, str, str, int]:
    """A library written by the version before anchors: a book, a highlight saved by the
    text view, a note about a page, an answer citing a loosely quoted passage."""
    db = pw.SqliteDatabase(str(path), pragmas=PRAGMAS)
    db.bind(m.ALL_MODELS, bind_refs=False, bind_backrefs=False)
    db.register_function(m.page_text, "margin_text", 1, deterministic=True)
    db.register_function(m.unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    before = MIGRATIONS.index(migrations._text_quote_anchors)
    for version in range(1, before + 1):
        with db.atomic():
            MIGRATIONS[version - 1](db)
            db.execute_sql(f"PRAGMA user_version = {version}")
    library = Library(resolve_paths().ensure(), db)
    book_id = import_book(library, books_dir / "metamorphosis.txt").book.id
    # the pages as that schema stores them (a blob each: before blocks, issue 41)
    texts = [
        (int(n), m.page_text(t))
        for n, t in db.execute_sql(
            "SELECT number, text FROM page WHERE book_id = ? ORDER BY number", (book_id,)
        )
    ]
    page, text = next((n, t) for n, t in texts if n > 8 and "\n\n" in t)
    start = text.index("\n\n") + 2  # a passage after a paragraph break: view offsets differ
    words = text[start : start + 90]
    anchor = {
        "start": {"page": page, "offset": stored_to_view(text, start)},
        "end": {"page": page, "offset": stored_to_view(text, start + 90)},
    }
    db.execute_sql(
        "INSERT INTO highlight (book_id, page, text, note, colour, anchor, created_at, updated_at)"
        " VALUES (?, ?, ?, '', 'yellow', ?, datetime('now'), datetime('now'))",
        (book_id, page, words, json.dumps(anchor)),
    )
    db.execute_sql(
        "INSERT INTO note (book_id, page, text, source, created_at, updated_at)"
        " VALUES (?, 20, 'the sister', 'reader', datetime('now'), datetime('now'))",
        (book_id,),
    )
    cid = db.execute_sql(
        "INSERT INTO conversation (book_id, title, created_at, updated_at)"
        " VALUES (?, 'q', datetime('now'), datetime('now'))",
        (book_id,),
    ).lastrowid
    quoted = collapse(dict(texts)[30])[300:360]
    cites = [{"book_id": book_id, "first_page": 30, "last_page": 30, "quoted_text": quoted}]
    db.execute_sql(
        "INSERT INTO message (conversation_id, role, kind, content, text, status, citations,"
        " created_at, updated_at) VALUES (?, 'assistant', 'answer', '[]', 'x', 'complete', ?,"
        " datetime('now'), datetime('now'))",
        (cid, json.dumps(cites)),
    )
    db.close()
    return book_id, collapse(words), quoted, int(cid)


def test_the_migration_anchors_what_an_older_library_holds(books_dir: Path) -> None:
    path = resolve_paths().database
    book_id, words, quoted, cid = _library_before_anchors(path, books_dir)
    library = Library.open(resolve_paths())
    try:
        assert current_version(library.db) == SCHEMA_VERSION
        [highlight] = library.list_highlights(book_id)
        assert highlight.quote is not None
        assert highlight.quote.exact == words
        stored = library.page(book_id, highlight.page).text
        assert collapse(stored[highlight.quote.start : highlight.quote.end]) == words
        assert highlight.quote.prefix and highlight.quote.suffix
        (raw,) = library.db.execute_sql("SELECT quote FROM note").fetchone()
        note = TextQuote.from_json(json.loads(raw))
        assert note is not None and note.page == 20
        assert collapse(library.page(book_id, 20).text).startswith(note.exact)
        (cites,) = library.db.execute_sql(
            "SELECT citations FROM message WHERE conversation_id = ?", (cid,)
        ).fetchone()
        [cite] = json.loads(cites)
        assert cite["exact"] == quoted
        page_text = library.page(book_id, 30).text
        assert collapse(page_text[cite["start"] :]).startswith(quoted)
    finally:
        library.close()
