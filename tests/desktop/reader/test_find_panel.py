"""The Find panel (find_panel.py): matches in book order with a count, options, F3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import press, text_view


def test_find_lists_matches_in_book_order_with_a_count_and_f3_walks_them(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    book = library.set_read_to(book.id, book.page_count)  # read to the end: nothing folded
    reader.open_book(book, 1)
    reader.find_box.setText("Cheshire")
    reader.run_find()
    pages = [
        reader.find_results.item(i).data(Qt.ItemDataRole.UserRole + 2)[0]
        for i in range(reader.find_results.count())
    ]
    assert pages == sorted(pages) and len(pages) > 3
    assert reader.find_count.text() == f"{len(pages)} matches"
    view = text_view(reader)
    view.setFocus()
    press(view, Qt.Key.Key_F3)
    assert reader.page == pages[0] and view.marks.marked() and view.mark_visible()
    press(view, Qt.Key.Key_F3)
    assert reader.page == pages[1] and view.mark_visible()
    assert reader.find_count.text() == f"2 of {len(pages)} matches"
    press(view, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert reader.page == pages[0]
    assert reader.find_results.currentRow() == 0


def test_find_options_and_nothing_found(reader: Reader, library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.find_box.setText("cat")
    reader.run_find()
    loose = reader.find_results.count()
    reader.whole_word_box.setChecked(True)
    reader.run_find()
    whole = reader.find_results.count()
    assert 0 < whole < loose
    reader.exact_box.setChecked(True)
    reader.find_box.setText("CHESHIRE")
    reader.run_find()
    assert reader.find_results.count() == 0
    assert reader.find_count.text() == "Nothing matches “CHESHIRE”."


def test_f3_marks_each_match_on_a_page_in_turn(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.find_box.setText("Alice")
    reader.run_find()
    matches = reader.side.finder.matches
    index = next(i for i in range(len(matches) - 2) if matches[i].page == matches[i + 2].page)
    page = matches[index].page
    view = text_view(reader)
    reader.side.finder.go_match(index)
    offsets = []
    for _ in range(3):
        assert reader.page == page and view.mark_visible()
        mark = view.marks.mark_position()
        assert mark is not None and view.flow.page_offset(mark[0])[0] == page
        offsets.append(view.flow.page_offset(mark[0])[1])
        press(view, Qt.Key.Key_F3)
    assert offsets == sorted(offsets) and len(set(offsets)) == 3, "three different places"


def test_find_folds_matches_after_where_you_have_read(
    reader: Reader, library: Library, books_dir: Path, qtbot: Any
) -> None:
    """Issue 46 item 4: read to p. 3, the later matches are folded behind a count."""
    from desktop.reader.find_panel import LATER_ROLE

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    book = library.set_read_to(book.id, 3)
    reader.open_book(book, 1)
    reader.find_box.setText("Cheshire")
    reader.run_find()
    results = reader.find_results
    assert results.count() == 1
    folded = results.item(0)
    assert folded.data(LATER_ROLE) and "more after where you have read (p. 3)" in folded.text()
    assert "Cheshire" not in folded.text()
    assert reader.find_count.text() == "Nothing matches “Cheshire” up to where you have read."
    reader.side.finder.go_item(folded)  # asked for: shown, once the click is over
    qtbot.waitUntil(lambda: not results.item(results.count() - 1).data(LATER_ROLE))
    pages = [results.item(i).data(Qt.ItemDataRole.UserRole + 2)[0] for i in range(results.count())]
    assert len(pages) > 3 and min(pages) > 3
