"""Caret browsing, whichever way it is turned on or off (F7 in the page, View › Caret browsing,
the reading settings' check box): the page, the menu's tick and the check box agree, and the
choice is kept — for every book, or for the open book when it has a look of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.settings import load_reader_settings
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window, open_alice


def shown(window: Any) -> tuple[bool, bool, bool]:
    """Caret browsing as the page, the View menu and the reading settings show it."""
    dialog = window.panels.reading_settings
    return (
        window.reader.view.caret_browsing,
        window.action_caret.isChecked(),
        dialog.caret.isChecked(),
    )


def press_f7(window: Any, qtbot: Any) -> None:
    view = window.reader.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F7)
    QApplication.processEvents()


def saved(window: Any) -> bool:
    return load_reader_settings(window.paths)[0].caret_browsing


def test_f7_the_menu_and_the_dialog_agree_and_the_choice_is_kept(
    window: Any, books_dir: Path, qtbot: Any, app: Any
) -> None:
    open_alice(window, books_dir, page=5)
    qtbot.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dialog = window.panels.reading_settings
    assert dialog is not None and dialog.isVisible(), "Ctrl+Shift+A opened the reading settings"
    assert shown(window) == (False, False, False)
    press_f7(window, qtbot)
    assert shown(window) == (True, True, True)
    assert saved(window)
    view = window.reader.view
    position = view.textCursor().position()
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.textCursor().position() == position + 1, "the arrows move the caret now"
    press_f7(window, qtbot)
    assert shown(window) == (False, False, False) and not saved(window)
    window.action_caret.trigger()  # View › Caret browsing
    assert shown(window) == (True, True, True) and saved(window)
    qtbot.mouseClick(dialog.caret, Qt.MouseButton.LeftButton)  # the dialog's check box
    assert shown(window) == (False, False, False) and not saved(window)
    qtbot.mouseClick(dialog.caret, Qt.MouseButton.LeftButton)
    assert shown(window) == (True, True, True) and saved(window)
    # a new window (the next start) comes back with it on
    again = MainWindow(app, restore=False)
    qtbot.addWidget(again)
    try:
        again.finish_building()
        assert again.action_caret.isChecked() and again.reader.typography.caret_browsing
    finally:
        close_window(qtbot, again)


def test_f7_keeps_a_books_own_look_for_that_book(window: Any, books_dir: Path, qtbot: Any) -> None:
    book_id = open_alice(window, books_dir, page=5)
    own = window.typography.for_book(book_id)
    window.panels.apply_typography(own, this_book_only=True)  # "Only for this book"
    press_f7(window, qtbot)
    assert window.reader.view.caret_browsing and window.action_caret.isChecked()
    assert window.typography.for_book(book_id).caret_browsing, "kept for this book"
    assert not window.typography.for_book(None).caret_browsing, "other books keep theirs"
    assert not saved(window)
