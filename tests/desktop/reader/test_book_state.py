"""What the reader remembers per book (desktop/reader/book_state.py): in the library with the
book, the same first line on screen when the window opens again at any size, nothing moved
by opening and closing, and the old reader.ini entries moved once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.app import Margin
from core.books.importer import import_book
from core.store.library import Library
from core.store.reading_state import ReadingStates
from desktop.reader.reader import Reader
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window


def open_window(app: Margin, qtbot: Any, size: tuple[int, int]) -> Any:
    window = MainWindow(app)
    qtbot.addWidget(window)
    window.reader.setProperty("headless", True)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    return window


@pytest.mark.parametrize("sizes", [[(1200, 800)] * 3, [(1200, 800), (800, 600), (1500, 950)]])
def test_opening_and_closing_the_window_moves_nothing(
    app: Margin, library: Library, books_dir: Path, qtbot: Any, real_font: str, sizes: Any
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 50)
    window = open_window(app, qtbot, sizes[0])
    window.open_book(book.id)
    QApplication.processEvents()
    first_line = window.reader.position()
    view = window.reader.view
    assert first_line[0] == 50, (
        window.reader.page,
        view.verticalScrollBar().value(),  # type: ignore[union-attr]
        view.verticalScrollBar().maximum(),  # type: ignore[union-attr]
        view._anchor,  # type: ignore[union-attr]
        view.flow.loaded,  # type: ignore[union-attr]
        view.isVisible(),  # type: ignore[union-attr]
    )
    close_window(qtbot, window)
    for size in sizes:
        window = open_window(app, qtbot, size)
        assert window.reader.book is not None and window.reader.book.id == book.id
        assert window.reader.position() == first_line, f"the same words at the top at {size}"
        close_window(qtbot, window)
    saved = library.get_book(book.id)
    assert (saved.page, saved.read_to) == (50, 50)
    window = open_window(app, qtbot, sizes[-1])  # the first page turn reads one screen on
    assert window.reader.view is not None
    QTest.keyClick(window.reader.view, Qt.Key.Key_PageDown)
    window.reader.save_position()
    assert library.get_book(book.id).read_to <= 51
    close_window(qtbot, window)


def test_the_side_panel_and_zoom_are_remembered_per_book(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    alice = import_book(library, books_dir / "alice_in_wonderland.epub").book
    gregor = import_book(library, books_dir / "metamorphosis.epub").book
    reader = Reader(library)
    qtbot.addWidget(reader)
    reader.show()
    reader.open_book(alice)
    reader.focus_find()
    reader.open_book(gregor)
    assert reader.side.current_name() == "Find", "no panel of its own yet: as it was"
    reader.side.show_panel("Highlights")
    reader.open_book(alice)
    assert reader.side.current_name() == "Find"
    reader.open_book(gregor)
    assert reader.side.current_name() == "Highlights"
    assert ReadingStates(library.db).get(alice.id).side == "Find"


def test_reader_ini_entries_move_into_the_library_once(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 20)
    ini = QSettings(str(library.paths.config / "reader.ini"), QSettings.Format.IniFormat)
    ini.setValue(f"book/{book.id}/place", "20:311")
    ini.setValue(f"book/{book.id}/zoom", "2.25")
    ini.setValue(f"book/{book.id}/typography", '{"font_size": 21}')
    ini.setValue("book/777/place", "4:10")  # a deleted book's leftovers
    ini.setValue("font_size", 14)
    ini.sync()
    reader = Reader(library)
    qtbot.addWidget(reader)
    state = ReadingStates(library.db).get(book.id)
    assert state.place == (20, 311) and state.zoom == 2.25
    assert state.view == {"typography": {"font_size": 21}}
    assert ReadingStates(library.db).get(777).place is None
    again = QSettings(str(library.paths.config / "reader.ini"), QSettings.Format.IniFormat)
    assert not [k for k in again.allKeys() if k.startswith("book/")]
    assert again.value("font_size") in (14, "14"), "the reader's own habits stay in reader.ini"
    from desktop.reader.typography import TypographyStore

    looks = TypographyStore(library.paths, reader.settings)
    assert looks.has_override(book.id) and looks.for_book(book.id).font_size == 21
