"""The toolbar's ◀ ▶ follow the book's page progression (issue 29 leftover): in a book whose
pages turn right to left the left-pointing button, on the left, turns forward — as the Left
arrow key and the left click zone already do — Ctrl+Left too, and each button says what it
does. A left-to-right book opened next puts them back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.desktop.conftest import open_book_file
from tests.desktop.reader.test_rtl_progression import rtl_book
from tests.support.comics import make_cbz


def open_in(window: Any, path: Path) -> Any:
    """The book at ``path`` open at page 2: the window's toolbar."""
    open_book_file(window, path, 2)
    return window.reader.toolbar


def click(qtbot: Any, button: Any) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    QApplication.processEvents()


def test_a_right_to_left_book_turns_forward_with_the_left_button(
    window: Any, tmp_path: Path, qtbot: Any
) -> None:
    bar = open_in(window, rtl_book(tmp_path / "rtl.epub"))
    reader = window.reader
    assert reader.book.page_count > 3 and reader.view.pager.rtl
    left, right = bar.turn_buttons()
    assert left.x() < bar.page_box.x() < right.x(), "one on each side of the page box"
    assert (left.text(), right.text()) == ("◀", "▶")
    assert left is bar.next_button and left.accessibleName() == "Next page"
    assert left.toolTip().startswith("Next page") and "right to left" in left.toolTip()
    assert right.accessibleName() == "Previous page" and right.toolTip().startswith("Previous")
    assert left.accessibleDescription() == "Pages turn right to left"
    click(qtbot, left)
    assert reader.page == 3, "◀ turns forward"
    click(qtbot, right)
    assert reader.page == 2, "▶ turns back"
    reader.view.setFocus()
    qtbot.keyClick(reader.view, Qt.Key.Key_Left, Qt.KeyboardModifier.ControlModifier)
    assert reader.page == 3, "Ctrl+Left turns forward too"
    qtbot.keyClick(reader.view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert reader.page == 2
    reader.go_to_page(reader.book.page_count)
    assert not left.isEnabled() and right.isEnabled(), "at the end: nothing further forward"
    # Tab goes through them left to right, as they stand
    bar.forward_button.setEnabled(True)
    bar.forward_button.setFocus(Qt.FocusReason.TabFocusReason)
    reader.go_to_page(2)
    qtbot.keyClick(bar.forward_button, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is left
    qtbot.keyClick(left, Qt.Key.Key_Tab)
    assert bar.page_box.isAncestorOf(QApplication.focusWidget()) or (
        QApplication.focusWidget() is bar.page_box
    )
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is right


def test_a_left_to_right_book_opened_next_puts_them_back(
    window: Any, tmp_path: Path, qtbot: Any
) -> None:
    open_in(window, rtl_book(tmp_path / "rtl.epub"))
    bar = open_in(window, rtl_book(tmp_path / "en.epub", direction=""))
    reader = window.reader
    assert not reader.view.pager.rtl
    left, right = bar.turn_buttons()
    assert left is bar.prev_button and right is bar.next_button
    assert left.x() < bar.page_box.x() < right.x()
    assert (left.text(), right.text()) == ("◀", "▶")
    assert left.toolTip() == "Previous page (Page Up)" and left.accessibleDescription() == ""
    click(qtbot, right)
    assert reader.page == 3, "▶ turns forward"
    click(qtbot, left)
    assert reader.page == 2
    reader.view.setFocus()
    qtbot.keyClick(reader.view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert reader.page == 3


def test_a_manga_and_the_comics_direction_setting_mirror_them_too(
    window: Any, tmp_path: Path, qtbot: Any
) -> None:
    bar = open_in(window, make_cbz(tmp_path / "manga.cbz", 6, manga=True))
    reader = window.reader
    assert reader.view.rtl and bar.turn_buttons() == (bar.next_button, bar.prev_button)
    click(qtbot, bar.turn_buttons()[0])
    assert reader.page == 3, "◀ reads on in a manga"
    reader.view.set_rtl(False)  # the view's "Right to left (manga)" setting, unticked
    QApplication.processEvents()
    assert bar.turn_buttons() == (bar.prev_button, bar.next_button)
    assert bar.prev_button.x() < bar.page_box.x() < bar.next_button.x()
    click(qtbot, bar.next_button)
    assert reader.page == 4
