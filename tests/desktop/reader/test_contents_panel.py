"""The Contents panel (contents_panel.py): a page column, the chapter in bold, no contents,
reading on after a click."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import press, text_view


def test_contents_have_a_page_column_and_follow_the_reading(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    toc = library.toc(book.id)
    library.set_position(book.id, toc[3].page)  # read up to there: not looking ahead
    reader.open_book(library.get_book(book.id))
    item = reader.toc.topLevelItem(3)
    assert item.text(0) == toc[3].title and item.text(1) == str(toc[3].page)
    assert reader.current_chapter() is item and item.font(0).bold()
    assert (
        toc[3].title in reader.footer.text()
        and f"p. {toc[3].page} of {book.page_count}" in reader.footer.text()
    )
    assert "min left in chapter" in reader.footer.text()
    view = text_view(reader)
    while reader.page < toc[4].page:
        press(view, Qt.Key.Key_PageDown)
    assert reader.current_chapter() is reader.toc.topLevelItem(4)
    assert not item.font(0).bold()


def test_a_book_without_contents_says_so(reader: Reader, library: Library, tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("Just some words.\n\nAnd a few more.", encoding="utf-8")
    book = import_book(library, plain).book
    reader.open_book(book, 1)
    if library.toc(book.id):
        pytest.skip("the text parser made contents for this file")
    assert reader.toc_stack.currentWidget() is reader.toc_empty
    assert "no table of contents" in reader.toc_empty.text()


def test_after_clicking_a_contents_entry_page_down_reads_on_from_there(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    item = reader.toc.topLevelItem(6)
    rect = reader.toc.visualItemRect(item)
    QTest.mouseClick(reader.toc.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    start = int(item.data(0, Qt.ItemDataRole.UserRole + 2))
    assert reader.page == start
    view = text_view(reader)
    before = view.top_position()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_PageDown)
    after = view.top_position()
    assert after > before and after[0] <= start + 1, "one screen on, not a page skipped"
