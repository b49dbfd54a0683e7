"""Highlight styles in the store (their migration and ``set_style``), a highlight quoted with
its citation, and a chapter's or a book's highlights as Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books.importer import import_book
from core.errors import BookError
from core.export.highlights import citation, highlights_markdown
from core.store.db import open_database
from core.store.highlight_style import set_style
from core.store.library import Library
from core.store.migrations import MIGRATIONS, SCHEMA_VERSION, _highlight_style, current_version


def test_an_older_library_gains_the_style_column(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    db = open_database(path)
    db.execute_sql("ALTER TABLE highlight DROP COLUMN style")  # as before this step
    db.execute_sql(f"PRAGMA user_version = {MIGRATIONS.index(_highlight_style)}")
    db.execute_sql(
        "INSERT INTO book (title, author, language, format, sha256, original_path, file_path,"
        " file_size, page_count, position, read_to, finished, status, added_at, updated_at)"
        " VALUES ('Old', '', '', 'txt', 'b', '', '', 0, 5, 1, 1, 0, 'ready', '2024-01-01',"
        " '2024-01-01')"
    )
    db.execute_sql(
        "INSERT INTO highlight (book_id, page, text, note, colour, created_at, updated_at)"
        " VALUES (1, 1, 'words', '', 'pink', '2024-01-01', '2024-01-01')"
    )
    db.close()
    again = open_database(path)
    assert current_version(again) == SCHEMA_VERSION
    assert again.execute_sql("SELECT style FROM highlight").fetchone()[0] == "highlight"
    _highlight_style(again)  # a second run changes nothing (self-contained)
    again.close()


def test_styles_are_kept_and_a_bad_one_is_refused(library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    h = library.add_highlight(book.id, 3, "Alice was beginning", colour="green")
    assert h.style == "highlight"
    set_style(h.id, "strike")
    (again,) = library.list_highlights(book.id)
    assert (again.colour, again.style) == ("green", "strike")
    with pytest.raises(BookError, match="not a highlight style; use one of highlight"):
        set_style(h.id, "sparkle")
    with pytest.raises(BookError, match="no highlight number 999"):
        set_style(999, "underline")


def test_citation_quotes_the_words_with_title_and_page() -> None:
    said = citation("Curiouser and\n curiouser!", "Alice’s *Adventures*", "12")
    assert said == "“Curiouser and curiouser!” — *Alice’s \\*Adventures\\**, p. 12"


def test_markdown_groups_by_chapter_with_page_look_and_note(
    library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    a = library.add_highlight(book.id, 13, "the pool", colour="blue", note="tears *wet*")
    library.add_highlight(book.id, 12, "down the hole", colour="yellow")
    library.add_highlight(book.id, 40, "the Cheshire Cat", colour="pink")
    set_style(a.id, "underline")
    chapters = {12: "II. The Pool of Tears", 13: "II. The Pool of Tears", 40: "VI. Pig and Pepper"}
    text = highlights_markdown(
        book,
        library.list_highlights(book.id),
        page_label=lambda p: f"{p}",
        chapter_of=chapters.__getitem__,
    )
    assert text.startswith(f"# {book.title}\n")
    assert text.index("down the hole") < text.index("the pool") < text.index("Cheshire")
    assert text.count("## II. The Pool of Tears") == 1 and "## VI. Pig and Pepper" in text
    assert "> the pool\n\n— p. 13 (blue, underlined)\n\n**Note:** tears \\*wet\\*" in text
    empty = highlights_markdown(book, [], scope="Chapter I")
    assert "Highlights from Chapter I" in empty and "No highlights yet." in empty
