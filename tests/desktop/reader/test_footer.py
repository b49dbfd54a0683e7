"""The footer (footer.py): the time left in the chapter at the measured pace, and the
looking-ahead note with Read to here, driven by real key presses."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import chapter_pages, press, text_view


def test_time_left_in_the_chapter_follows_the_measured_pace(
    reader: Reader, library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.reading

    clock = [1000.0]
    monkeypatch.setattr(core.reading.time, "monotonic", lambda: clock[0])
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    toc = library.toc(book.id)
    chapter = next(t for t in toc if "CHAPTER VI" in t.title)
    library.set_position(book.id, chapter.page)  # reading there, not looking ahead
    reader.open_book(library.get_book(book.id))
    for _ in range(3):
        clock[0] += 30.0  # thirty seconds a page
        reader.next_page()
    left = len(chapter_pages(library, book.id, chapter.page)) - 3
    assert f"about {max(1, round(left * 30 / 60))} min left in chapter" in reader.footer.text()
    reader.save_position()
    assert float(str(reader.settings.value("seconds_per_page"))) == 30.0


def test_a_page_turn_after_a_jump_is_looking_ahead_until_read_to_here(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 30)
    reader.open_book(library.get_book(book.id))
    view = text_view(reader)
    assert "Looking ahead" not in reader.footer.plain_text()
    reader.page_box.setFocus()  # Go to page 80, typed
    reader.page_box.selectAll()
    QTest.keyClicks(reader.page_box, "80")
    press(reader.page_box, Qt.Key.Key_Return)
    assert reader.page == 80
    QTest.mouseClick(reader.next_button, Qt.MouseButton.LeftButton)  # ▶
    press(view, Qt.Key.Key_PageDown)
    assert reader.page >= 81
    assert reader.footer.plain_text().startswith(
        "Looking ahead — the assistant still stops at p. 30"
    )
    reader.save_position()
    assert library.get_book(book.id).read_to == 30, "page turns after a jump are not reading"
    here = reader.page
    press(
        view, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )  # Read to here
    assert library.get_book(book.id).read_to == here
    assert "Looking ahead" not in reader.footer.plain_text()
    QTest.mouseClick(reader.next_button, Qt.MouseButton.LeftButton)
    reader.save_position()
    assert library.get_book(book.id).read_to == here + 1, "reading on from the bound again"
