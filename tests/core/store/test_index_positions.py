"""Issue 41: the migration ``_index_without_positions`` turns a library's search index with
positions (detail=full) into one without (detail=none), with the same search results, and
gives the view ``chunk_text`` a plan that reads one passage without decoding every page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from core.agent.spoiler_index import SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.store.db import open_database
from core.store.frozen.index_i41 import CHUNK_INDEX, CHUNK_TEXT_VIEW
from core.store.frozen.page_blocks_i41 import CHUNK_TEXT_VIEW_BLOCKS
from core.store.frozen.pages_v8 import CHUNK_INDEX_V8
from core.store.library import Library
from core.store.migrations import MIGRATIONS, _index_without_positions

QUERIES = ["sister violin", '"his sister"', '"the chief clerk"', "Gregor's father", '"Grete"']


def _results(db: Any, book_id: int) -> list[Any]:
    search = BookSearch(db)
    found = [
        [(h.chunk_id, h.snippet) for h in search.search_book(book_id, q, hybrid=False)]
        for q in QUERIES
    ]
    index = SpoilerIndex.build(db, book_id)
    return [*found, index.phrase("chief clerk"), index.near("sister", "violin")]


def _as_before(path: Path, version: int) -> list[Any]:
    """Turn the library into what it was before the step (the index with positions, filled,
    and the old view) and return its search results then."""
    db = open_database(path)
    try:
        with db.atomic():
            db.execute_sql("DROP TABLE chunk_index")
            db.execute_sql("DROP VIEW chunk_text")
            db.execute_sql(CHUNK_TEXT_VIEW_BLOCKS)
            db.execute_sql(CHUNK_INDEX_V8)
            db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")
            db.execute_sql(f"PRAGMA user_version = {version}")
        db.execute_sql("VACUUM")
        (book_id,) = db.execute_sql("SELECT id FROM book").fetchone()
        return _results(db, int(book_id))
    finally:
        db.close()


def _definitions(db: Any) -> tuple[str, str]:
    rows = dict(
        db.execute_sql(
            "SELECT name, sql FROM sqlite_master WHERE name IN ('chunk_index', 'chunk_text')"
        ).fetchall()
    )
    return rows["chunk_index"], rows["chunk_text"]


def test_an_index_with_positions_becomes_one_without_and_finds_the_same(
    books_dir: Path,
) -> None:
    before_step = MIGRATIONS.index(_index_without_positions)
    home = resolve_paths(Path(os.environ["MARGIN_HOME"]) / "old")
    library = Library.open(home)
    book = import_book(library, books_dir / "metamorphosis.epub").book
    library.close()
    before = _as_before(home.database, before_step)
    assert all(before) and before[1] and before[-1] is True
    old_size = home.database.stat().st_size
    for _ in range(2):  # and once more, as a library whose version was set back runs it
        library = Library.open(home)
        try:
            assert _definitions(library.db) == (CHUNK_INDEX, CHUNK_TEXT_VIEW)
            assert _results(library.db, book.id) == before
            library.db.execute_sql(
                "INSERT INTO chunk_index(chunk_index, rank) VALUES('integrity-check', 1)"
            )
            plan = library.db.execute_sql(
                "EXPLAIN QUERY PLAN SELECT text FROM chunk_text WHERE id = 1"
            ).fetchall()
            assert not any("MATERIALIZE" in str(r[3]) or "SCAN" in str(r[3]) for r in plan)
        finally:
            library.close()
        assert home.database.stat().st_size < old_size * 0.9
        db = open_database(home.database)
        db.execute_sql(f"PRAGMA user_version = {before_step}")
        db.close()
