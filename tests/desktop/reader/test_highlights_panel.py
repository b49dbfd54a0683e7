"""Highlights (highlights_panel.py and their drawing in the text view): whole extent, old
highlights without offsets, opening one at its own place."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QTextCursor

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from desktop.theme import highlight_colour
from tests.desktop.reader.conftest import text_view


def test_a_highlight_over_paragraphs_and_pages_is_drawn_over_its_whole_extent(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.setProperty("headless", True)
    reader.open_book(book, 10)
    view = text_view(reader)
    start = view.flow.starts[view.flow.loaded.index(10)] + 300
    end = view.flow.starts[view.flow.loaded.index(11)] + 400
    cursor = QTextCursor(view.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    selected = view.marks.selected_text()
    assert "\n" in selected and len(selected) > 1000
    assert reader.ask_about_selection("highlight")
    (saved,) = library.list_highlights(book.id)
    assert saved.anchor["start"] == {"page": 10, "offset": 300}
    assert saved.anchor["end"] == {"page": 11, "offset": 400}
    reader.go_to_page(60)
    reader.go_to_page(11)  # shown again from the other side
    yellow = highlight_colour("yellow")
    drawn = [
        s.cursor.selectedText().replace("\u2029", "\n").strip()
        for s in view.extraSelections()
        if s.format.background().color() == yellow
    ]
    assert drawn == [selected]


def test_an_old_highlight_without_offsets_still_shows(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    phrase = " ".join(library.page(book.id, 7).text.split()[10:16])
    library.add_highlight(book.id, 7, phrase, colour="pink")
    reader.open_book(book, 7)
    drawn = [s.cursor.selectedText() for s in text_view(reader).extraSelections()]
    assert phrase in drawn


def test_a_highlight_in_the_list_opens_at_its_own_place(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.setProperty("headless", True)
    reader.open_book(book, 20)
    view = text_view(reader)
    text = view.flow.page_text(20)
    word = "Alice"
    second = text.find(word, text.find(word) + 1)
    assert second > 0, "the page names Alice twice"
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.flow.starts[view.flow.loaded.index(20)] + second)
    cursor.setPosition(cursor.position() + len(word), QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    assert reader.ask_about_selection("highlight:pink")
    reader.go_to_page(70)
    reader._result_go(reader.highlight_list.item(0))
    mark = view.marks.mark_position()
    assert reader.page == 20 and mark is not None and view.mark_visible()
    assert view.flow.page_offset(mark[0]) == (20, second), "the second Alice, not the first"
