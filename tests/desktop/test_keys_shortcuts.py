"""Keyboard reading (issue 28 item 3): Enter and Shift+Enter in Find step through the
matches, and Help → Keyboard shortcuts (F1) lists every shortcut the window has, read from
its actions so it cannot drift."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QLineEdit

from desktop.window.shortcut_help import ShortcutHelp, key_text, plain
from tests.desktop.conftest import open_alice


def press_f1(window: Any, qtbot: Any) -> ShortcutHelp:
    (window.reader.view or window).setFocus()
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_F1)
    dialog = window.findChild(ShortcutHelp)
    assert isinstance(dialog, ShortcutHelp) and dialog.isVisible()
    return dialog


def test_enter_and_shift_enter_in_find_step_through_matches(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir, page=5, read_to=97)  # read to the end: nothing folded
    reader = window.reader
    window.reader.view.setFocus()
    qtbot.keyClick(window.reader.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    box: QLineEdit = reader.side.finder.box
    assert QApplication.focusWidget() is box
    qtbot.keyClicks(box, "Cheshire")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    matches = reader.side.finder.matches
    pages = [m.page for m in matches]
    assert len(pages) > 3
    first = next(i for i, p in enumerate(pages) if p >= 5)
    assert reader.page == pages[first]
    assert reader.find_count.text() == f"{first + 1} of {len(pages)} matches"
    assert QApplication.focusWidget() is box, "Enter leaves the focus in the box"
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert reader.find_count.text() == f"{first + 2} of {len(pages)} matches"
    assert reader.page == pages[first + 1]
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert reader.find_count.text() == f"{first + 1} of {len(pages)} matches"
    assert reader.page == pages[first]
    # new words: Enter finds them afresh
    box.selectAll()
    qtbot.keyClicks(box, "Duchess")
    qtbot.keyClick(box, Qt.Key.Key_Enter)
    assert all("duchess" in m.text.lower() for m in reader.side.finder.matches)
    assert reader.find_count.text().startswith(f"{reader.side.finder.index + 1} of ")
    assert "\n" not in box.text()


def test_f1_lists_every_action_and_shortcut_of_the_window(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir)
    dialog = press_f1(window, qtbot)
    listed = set(dialog.listed())
    actions = [a for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert len(actions) > 30
    for action in actions:
        row = (plain(action.text()), key_text(action.shortcuts()))
        assert row in listed, f"{row} is not in the shortcut list"
    for shortcut in window.findChildren(QShortcut):
        assert (shortcut.whatsThis(), key_text([shortcut.key()])) in listed
    assert all(what.strip() for what, _ in listed), "every row says what its keys do"
    keys = {k for _, k in listed}
    for needed in ("F1", "F3", "Ctrl+F", "Ctrl+H", "Ctrl+Alt+4", "Ctrl+N", "Esc"):
        assert QKeySequence(needed).toString(QKeySequence.SequenceFormat.NativeText) in keys
    dialog.close()


def test_the_list_cannot_drift_and_filters(window: Any, qtbot: Any) -> None:
    extra = QAction("Tell me a &joke", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+J"))
    window.addAction(extra)
    dialog = press_f1(window, qtbot)
    assert ("Tell me a joke", "Ctrl+Alt+J") in dialog.listed()
    assert dialog.focusWidget() is dialog.filter  # the filter has the keys once it is active
    qtbot.keyClicks(dialog.filter, "highlight")
    shown = dialog.listed()
    assert shown and all("highlight" in what.lower() for what, _ in shown)
    assert len(shown) < len(dialog.rows)
    qtbot.keyClick(dialog.filter, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
