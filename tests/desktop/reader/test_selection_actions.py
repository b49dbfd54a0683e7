"""What the reader does with a selection (selection_actions.py): keyboard selection, the
bar beside it, the quick-action shortcuts, highlights with a note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from core.books.importer import import_book
from core.store.library import Library
from desktop.events import SelectionChanged
from desktop.reader.reader import Reader
from desktop.theme import highlight_colour
from tests.desktop.reader.conftest import alice_window, press, text_view


def test_keyboard_selection_then_ask_shortcut_emits_the_text(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with alice_window(library, books_dir, qtbot, 8) as (win, _book):
        view = text_view(win.reader)
        view.setFocus()
        shift_ctrl = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier
        for _ in range(4):
            press(view, Qt.Key.Key_Right, shift_ctrl)
        press(view, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
        text = view.marks.selected_text()
        assert len(text.split()) >= 4
        assert win.reader.selection_bar.isVisible()
        bar = win.reader.selection_bar.geometry()
        area = view.viewport().geometry()
        area.moveTopLeft(view.viewport().mapTo(win.reader, area.topLeft()))
        assert area.intersects(bar) and bar.bottom() <= win.reader.height()
        with qtbot.waitSignal(win.requestAsk, timeout=2000) as blocker:
            press(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert blocker.args[0].text == text and blocker.args[0].action == "ask"


def test_selection_bar_stays_in_view_for_a_long_selection(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 10)
    view = text_view(reader)
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.flow.starts[view.flow.loaded.index(10)])
    cursor.setPosition(
        view.flow.starts[view.flow.loaded.index(12)], QTextCursor.MoveMode.KeepAnchor
    )
    view.setTextCursor(cursor)  # far longer than the screen
    bar = reader.selection_bar.geometry()
    top = view.viewport().mapTo(reader, view.viewport().rect().topLeft()).y()
    bottom = top + view.viewport().height()
    assert reader.selection_bar.isVisible()
    assert top <= bar.top() and bar.bottom() <= bottom, "the bar is inside the visible text"


def test_selection_action_shortcuts_in_the_reader(
    reader: Reader, library: Library, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 10)
    view = text_view(reader)
    word = library.page(book.id, 10).text.split()[5]
    assert view.marks.select_text(word)
    with qtbot.waitSignal(reader.requestAsk, timeout=2000) as blocker:
        press(
            view,
            Qt.Key.Key_D,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
    assert blocker.args[0].action == "define" and blocker.args[0].text == word


def test_a_selection_and_its_end_go_out_on_the_stream(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 10)
    heard: list[SelectionChanged] = []
    reader.events.subscribe(SelectionChanged, heard.append)
    view = text_view(reader)
    word = library.page(book.id, 10).text.split()[5]
    assert view.marks.select_text(word)
    assert heard[-1] == SelectionChanged(book.id, 10, word)
    reader.host.clear_selection()
    assert heard[-1] == SelectionChanged(book.id, reader.page, ""), "the selection went"


def test_a_highlight_is_saved_in_the_chosen_colour_without_a_question(
    reader: Reader, library: Library, books_dir: Path, note_dialog: dict[str, Any]
) -> None:
    book = import_book(library, books_dir / "metamorphosis.epub").book
    reader.open_book(book, 4)
    reader.setProperty("headless", False)  # nothing is asked all the same (issue 39, item 5)
    view = text_view(reader)
    phrase = " ".join(library.page(book.id, 4).text.split()[5:10])
    assert view.marks.select_text(phrase)
    reader.selection_bar.buttons["highlight:green"].click()
    assert note_dialog["asked"] == 0
    (saved,) = library.list_highlights(book.id)
    assert (saved.colour, saved.note, saved.text) == ("green", "", phrase)
    green = highlight_colour("green")
    drawn = [s for s in view.extraSelections() if s.format.background().color() == green]
    assert drawn and drawn[0].cursor.selectedText() == phrase
