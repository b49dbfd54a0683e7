from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.errors import BookCode, BookError, StorageError
from core.paths import resolve_paths
from core.search import BookSearch
from core.store.db import open_database
from core.store.library import Library
from core.store.migrations import SCHEMA_VERSION, current_version
from core.store.models import page_text, unpack_chunk
from core.store.packing import plain_html
from core.store.page_blocks import margin_page, page_content


def test_migrates_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    path.write_bytes(b"")
    db = open_database(path)
    assert current_version(db) == SCHEMA_VERSION
    names = {r[0] for r in db.execute_sql("SELECT name FROM sqlite_master").fetchall()}
    assert {
        "book",
        "page",
        "chunk",
        "chunk_index",
        "highlight",
        "note",
        "conversation",
        "message",
    } <= names
    assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    db.close()
    again = open_database(path)
    assert current_version(again) == SCHEMA_VERSION
    again.close()


def test_refuses_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    con.close()
    with pytest.raises(StorageError) as err:
        open_database(path)
    assert "newer version of Margin" in err.value.message


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError) as err:
        open_database(path)
    assert str(path) in err.value.message


def _book(lib: Library, pages: int = 10) -> int:
    from core.store import models as m

    book = m.Book.create(title="The Test", format="txt", sha256="a" * 64, page_count=pages)
    for n in range(1, pages + 1):
        m.Page.create(book=book.id, number=n, text=f"page {n}")
    return int(book.id)


def test_jumps_never_raise_read_to_and_reading_does(margin_home: Path) -> None:
    lib = Library.open(resolve_paths())
    book_id = _book(lib, pages=20)
    book = lib.set_position(book_id, 5)
    assert (book.page, book.read_to, book.spoiler_bound) == (5, 5, 5)
    book = lib.set_page(book_id, 15)  # a jump (citation, contents, Find, Go to)
    assert (book.page, book.read_to) == (15, 5)
    book = lib.set_page(book_id, 2)  # going back never lowers the bound
    assert (book.page, book.read_to) == (2, 5)
    book = lib.set_page(book_id, 6, reading=True)  # read on from 5 to 6
    assert (book.page, book.read_to, book.spoiler_bound) == (6, 6, 6)
    book = lib.set_page(book_id, 3, reached=9)  # read on to 9, then jumped back
    assert (book.page, book.read_to) == (3, 9)
    assert lib.set_page(book_id, 99, reading=True).read_to == 20  # clamped to the book
    book = lib.set_read_to(book_id, 4)  # the reader lowers it explicitly
    assert (book.page, book.read_to, book.spoiler_bound) == (20, 4, 4)
    assert lib.set_read_to(book_id, 12).read_to == 12
    assert lib.set_page(book_id, 10**30).page == 20  # huge numbers clamp, never overflow SQLite
    with pytest.raises(BookError):
        lib.set_page(book_id, "seven")  # type: ignore[arg-type]
    assert lib.set_finished(book_id, True).spoiler_bound is None
    assert lib.set_finished(book_id, False).spoiler_bound == 12


def test_migration_v3_keeps_the_old_position_as_the_bound(tmp_path: Path) -> None:
    import peewee as pw

    from core.store import models as m
    from core.store.migrations import MIGRATIONS

    path = tmp_path / "v2.sqlite3"
    raw = pw.SqliteDatabase(str(path))
    raw.bind(m.ALL_MODELS)
    for step in MIGRATIONS[:2]:
        step(raw)
    raw.execute_sql("PRAGMA user_version = 2")
    raw.execute_sql(
        "INSERT INTO book (title, author, language, format, sha256, original_path, file_path,"
        " file_size, page_count, position, finished, status, added_at, updated_at)"
        " VALUES ('Old', '', '', 'txt', 'b', '', '', 0, 50, 17, 0, 'ready', '2024-01-01', '2024-01-01')"
    )
    raw.close()
    db = open_database(path)
    row = db.execute_sql("SELECT position, read_to FROM book").fetchone()
    assert tuple(row) == (17, 17)
    db.close()


def test_position_finished_highlights_notes(margin_home: Path) -> None:
    lib = Library.open(resolve_paths())
    book_id = _book(lib)
    assert lib.set_position(book_id, 99).page == 10
    assert lib.set_position(book_id, -3).page == 1
    book = lib.set_position(book_id, 4)
    assert book.spoiler_bound == 4
    assert lib.set_finished(book_id, True).spoiler_bound is None
    h = lib.add_highlight(book_id, 3, "a passage", colour="green", anchor={"start": 1, "end": 5})
    assert lib.list_highlights(book_id, page=3)[0].anchor == {"start": 1, "end": 5}
    assert lib.update_highlight(h.id, note="why", colour="pink").colour == "pink"
    with pytest.raises(BookError):
        lib.add_highlight(book_id, 3, "x", colour="plaid")
    with pytest.raises(BookError) as err:
        lib.add_highlight(book_id, 11, "x")
    assert err.value.code == BookCode.BAD_PAGE
    n = lib.add_note(book_id, " remember this ", page=2, source="agent")
    assert lib.list_notes(book_id, source="agent")[0].text == "remember this"
    assert lib.update_note(n.id, "changed").text == "changed"
    with pytest.raises(BookError):
        lib.add_note(book_id, "   ")
    lib.delete_note(n.id)
    lib.delete_highlight(h.id)
    assert lib.list_notes(book_id) == [] and lib.list_highlights(book_id) == []
    lib.close()


def test_find_book_by_prefix_and_id(margin_home: Path) -> None:
    from core.store import models as m

    lib = Library.open(resolve_paths())
    a = m.Book.create(title="War and Peace", format="txt", sha256="1" * 64)
    m.Book.create(title="War of the Worlds", format="txt", sha256="2" * 64)
    assert lib.find_book(str(a.id)).title == "War and Peace"
    assert lib.find_book("war and").id == a.id
    with pytest.raises(BookError) as err:
        lib.find_book("War")
    assert err.value.code == BookCode.AMBIGUOUS
    with pytest.raises(BookError) as err:
        lib.find_book("Ulysses")
    assert err.value.code == BookCode.NOT_FOUND
    with pytest.raises(BookError):
        lib.find_book("100%_")
    lib.close()


# Issue 17, item 13: the text is stored once for search ---------------------------------


def _import_fixtures(books_dir: Path) -> tuple[Library, int]:
    from core.books.importer import import_book

    library = Library.open(resolve_paths())
    total = 0
    for name in (
        "alice_in_wonderland.epub",
        "alice_in_wonderland.txt",
        "metamorphosis.epub",
        "metamorphosis.txt",
    ):
        import_book(library, books_dir / name)
        total += (books_dir / name).stat().st_size
    return library, total


def _shown(html: str | None, text: str) -> str | None:
    """A parsed page's HTML as the reader shows it ("" is the text's plain paragraphs)."""
    return plain_html(text) if html == "" else html


def test_search_index_keeps_no_copy_of_the_text(books_dir: Path) -> None:
    library, total = _import_fixtures(books_dir)
    try:
        db = library.db
        tables = {r[0] for r in db.execute_sql("SELECT name FROM sqlite_master").fetchall()}
        assert "chunk_index_content" not in tables  # external content: text lives in chunk
        db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute_sql("VACUUM")
        size = library.paths.database.stat().st_size
        # 5.6 with three copies; 3.9 in v7; 2.5 with 16 KiB pages; 1.5 with 4 KiB (issue 41)
        assert size / total < 2.0, size / total
        books = library.list_books()
        hit = BookSearch(db).search_book(books[-1].id, "rabbit watch", limit=3)
        assert hit and "«" in hit[0].snippet
        library.delete_book(books[0].id)
        db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        from core.books.parse import parse_book

        for book in library.list_books():  # HTML comes back exactly as parsed
            parsed = parse_book(Path(book.file_path))  # ("": the text's plain paragraphs)
            assert [library.page(book.id, n).html for n in (1, 2, 5)] == [
                _shown(parsed.pages[n - 1].html, parsed.pages[n - 1].text) for n in (1, 2, 5)
            ]
    finally:
        library.close()


def test_v6_library_migrates_to_one_copy_of_the_text(books_dir: Path) -> None:
    """An existing (schema 6) library: its index is rebuilt without the copy, page text and
    HTML and chunk text are compressed, the file shrinks, and searching and reading give the
    same results as before."""
    library, _ = _import_fixtures(books_dir)
    db = library.db
    books = library.list_books()
    alice = next(b for b in books if b.title.startswith("Alice"))
    before_search = [
        (h.chunk_id, h.snippet) for h in BookSearch(db).search_book(alice.id, "Alice garden")
    ]
    before_pages = [library.page(b.id, 3) for b in books]
    path = library.paths.database
    library.close()
    # turn the database back into schema 6: plain page text and HTML in their own columns,
    # plain chunk text, and an FTS table with its own copy of the text
    con = sqlite3.connect(path)
    con.create_function("margin_text", 1, page_text)
    con.create_function("margin_chunk", 3, unpack_chunk)
    con.create_function("margin_page", 2, margin_page)
    con.create_function("page_html", 2, lambda blob, block: page_content(blob, block)[1])
    con.execute("DROP TABLE chunk_index")
    con.execute("DROP TABLE spoiler_stats")  # schema 9
    con.execute("UPDATE chunk SET text = (SELECT text FROM chunk_text t WHERE t.id = chunk.id)")
    con.execute("DROP VIEW chunk_text")
    con.execute("ALTER TABLE page ADD COLUMN html TEXT")
    con.execute("ALTER TABLE page ADD COLUMN plain TEXT")
    con.execute(  # pages in blocks (issue 41) back to plain text and HTML
        "UPDATE page SET html = (SELECT page_html(page.text, b.data) FROM page_block b "
        "WHERE b.book_id = page.book_id AND b.first = page.block), "
        "plain = (SELECT v.text FROM page_plain v WHERE v.book_id = page.book_id "
        "AND v.number = page.number)"
    )
    con.execute("UPDATE page SET text = plain")
    con.execute("ALTER TABLE page DROP COLUMN plain")
    con.execute("DROP VIEW page_plain")
    con.execute("DROP TABLE page_block")
    con.execute("ALTER TABLE page DROP COLUMN block")
    con.execute(
        "CREATE VIRTUAL TABLE chunk_index USING fts5(text, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    con.execute("INSERT INTO chunk_index (rowid, text) SELECT id, text FROM chunk")
    assert con.execute("SELECT typeof(text) FROM page LIMIT 1").fetchone()[0] == "text"
    con.execute("PRAGMA user_version = 6")
    con.commit()
    con.execute("VACUUM")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    v6_size = path.stat().st_size
    library = Library.open(resolve_paths())
    try:
        db = library.db
        assert db.execute_sql("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        assert path.stat().st_size < 0.7 * v6_size, (path.stat().st_size, v6_size)
        db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')")
        tables = {r[0] for r in db.execute_sql("SELECT name FROM sqlite_master").fetchall()}
        assert "chunk_index_content" not in tables
        after = [
            (h.chunk_id, h.snippet) for h in BookSearch(db).search_book(alice.id, "Alice garden")
        ]
        assert after == before_search and after
        assert [library.page(b.id, 3) for b in books] == before_pages
    finally:
        library.close()
