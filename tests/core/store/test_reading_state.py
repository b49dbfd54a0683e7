"""A book's reading state lives with the book (core/store/reading_state.py): kept, deleted with
it, never inherited by the next book; ids are never reused (schema migration), and event logs
go with their conversation."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import peewee as pw
import pytest

from core.agent.service import AgentService
from core.agent.types import Question
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import Settings
from core.store import models as m
from core.store.conversations import Conversations
from core.store.db import PRAGMAS
from core.store.library import Library
from core.store.migrations import MIGRATIONS, SCHEMA_VERSION, current_version
from core.store.page_blocks import margin_page
from core.store.reading_state import ReadingStates, ViewState


@pytest.fixture
def library() -> Iterator[Library]:
    lib = Library.open(resolve_paths().ensure())
    yield lib
    lib.close()


def ask(service: AgentService, conversation_id: int, text: str) -> None:
    async def go() -> None:
        async for _ in service.ask(conversation_id, Question(text)):
            pass

    asyncio.run(go())


def test_view_state_is_kept_per_book_and_bad_rows_read_as_defaults(
    library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    states = ReadingStates(library.db)
    assert states.get(book.id) == ViewState()
    states.update(book.id, place=(12, 340), zoom=2.5)
    states.update(book.id, side="Find", view={"typography": {"font_size": 19}})
    assert states.get(book.id) == ViewState(
        (12, 340), 2.5, "Find", {"typography": {"font_size": 19}}
    )
    library.db.execute_sql(
        "UPDATE reading_state SET data = '{not json' WHERE book_id = ?", (book.id,)
    )
    assert states.get(book.id) == ViewState()
    assert ViewState.from_json('{"place": ["x", 1], "zoom": 99, "view": 3}') == ViewState()
    states.update(9999, side="Find")  # a book that is gone keeps nothing
    assert library.db.execute_sql("SELECT count(*) FROM reading_state").fetchone()[0] == 1
    chapters = states.page_chapters(book.id)
    assert len(chapters) == book.page_count and chapters == sorted(chapters)


def test_a_deleted_book_leaves_nothing_and_the_next_book_starts_clean(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    paths = library.paths
    first = import_book(library, books_dir / "metamorphosis.txt").book
    states = ReadingStates(library.db)
    states.update(first.id, place=(30, 120), zoom=1.7, side="Highlights")
    library.set_position(first.id, 30)
    service = AgentService(library, paths, Settings(provider="passages"))
    conversation = service.create_conversation(first.id)
    ask(service, conversation.id, "Who is Gregor?")
    log = paths.event_log(conversation.id)
    assert log.exists() and log.read_text(encoding="utf-8").strip()
    copy = Path(library.get_book(first.id).file_path)
    before = {p for p in paths.data.rglob("*") if p.is_file()}

    library.delete_book(first.id)

    after = {p for p in paths.data.rglob("*") if p.is_file()}
    assert not log.exists() and not copy.exists()
    assert before - after == {log, copy}, "no file of the deleted book is left"
    second = import_book(library, books_dir / "alice_in_wonderland.txt").book
    assert second.id > first.id, "book ids are never reused"
    assert states.get(second.id) == ViewState() and states.get(first.id) == ViewState()
    assert (second.page, second.read_to) == (1, 1)
    assert service.list_conversations(second.id) == []
    again = service.create_conversation(second.id)
    assert again.id > conversation.id, "conversation ids are never reused"
    assert not paths.event_log(again.id).exists()


def test_deleting_a_conversation_deletes_its_event_log(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    book = import_book(library, books_dir / "metamorphosis.txt").book
    service = AgentService(library, library.paths, Settings(provider="passages"))
    kept, gone = service.create_conversation(book.id), service.create_conversation(book.id)
    ask(service, kept.id, "Who is Grete?")
    ask(service, gone.id, "Who is Gregor?")
    service.delete_conversation(gone.id)
    assert not library.paths.event_log(gone.id).exists()
    assert library.paths.event_log(kept.id).exists()
    stale = library.paths.event_log(kept.id + 10)  # an old library's orphaned log
    stale.write_text('{"type": "old"}\n', encoding="utf-8")
    while (new := service.create_conversation(book.id)).id < kept.id + 10:
        pass
    assert new.id == kept.id + 10 and not stale.exists(), "a new conversation starts clean"


def _old_library(path: Path, books_dir: Path) -> tuple[list[int], int]:
    """A library written by the version before ids were AUTOINCREMENT: three books (the
    last deleted, so SQLite would hand its id out again), pages, a conversation."""
    db = pw.SqliteDatabase(str(path), pragmas=PRAGMAS)
    db.bind(m.ALL_MODELS, bind_refs=False, bind_backrefs=False)
    db.register_function(m.page_text, "margin_text", 1, deterministic=True)
    db.register_function(m.unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    before = MIGRATIONS.index(_first_new_step())
    for version in range(1, before + 1):
        with db.atomic():
            MIGRATIONS[version - 1](db)
            db.execute_sql(f"PRAGMA user_version = {version}")
    paths = resolve_paths().ensure()
    library = Library(paths, db)
    ids = [
        import_book(library, books_dir / name).book.id
        for name in ("metamorphosis.txt", "alice_in_wonderland.txt", "metamorphosis.epub")
    ]
    # written as that version wrote it (today's models have columns it did not have)
    conversation = db.execute_sql(
        "INSERT INTO conversation (book_id, title, created_at, updated_at)"
        " VALUES (?, 'New conversation', datetime('now'), datetime('now'))",
        (ids[0],),
    ).lastrowid
    library.delete_book(ids[-1])
    db.close()
    return ids, conversation


def _first_new_step() -> Any:
    from core.store import migrations

    return migrations._v12_ids_never_reused


def test_the_migration_keeps_every_row_and_stops_reusing_ids(
    books_dir: Path, tmp_path: Path
) -> None:
    path = resolve_paths().database
    ids, conversation = _old_library(path, books_dir)
    raw = sqlite3.connect(path)
    pages = raw.execute("SELECT count(*) FROM page").fetchone()[0]
    books = raw.execute("SELECT id, title, position, read_to FROM book ORDER BY id").fetchall()
    raw.close()
    library = Library.open(resolve_paths())
    try:
        db = library.db
        assert current_version(db) == SCHEMA_VERSION
        for table in ("book", "conversation"):
            sql = db.execute_sql("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
            assert "AUTOINCREMENT" in sql.fetchone()[0]
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1, "back on"
        assert db.execute_sql("PRAGMA foreign_key_check").fetchall() == []
        assert db.execute_sql("SELECT count(*) FROM page").fetchone()[0] == pages
        rows = db.execute_sql("SELECT id, title, position, read_to FROM book ORDER BY id")
        assert rows.fetchall() == books
        assert [c.id for c in Conversations(db).list_for_book(ids[0])] == [conversation]
        unique = db.execute_sql("SELECT name FROM sqlite_master WHERE name = 'book_sha256'")
        assert unique.fetchone() is not None, "the indexes are back"
        third = import_book(library, books_dir / "alice_in_wonderland.epub").book
        library.delete_book(third.id)
        fourth = import_book(library, books_dir / "alice_in_wonderland.epub").book
        assert fourth.id > third.id, "from now on a deleted book's id is never handed out"
        library.delete_book(ids[0])  # cascades still work after the rebuild
        left = db.execute_sql("SELECT count(*) FROM conversation WHERE book_id = ?", (ids[0],))
        assert left.fetchone()[0] == 0
    finally:
        library.close()
