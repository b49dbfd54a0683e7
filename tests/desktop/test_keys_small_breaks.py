"""Issue 28's small breaks, driven through the window: the chat header's cost line and
buttons are whole at every width, the theme menu ticks the current theme, and a reply made
with no model connected says so in the transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QWidget

from desktop.window.menus import THEME_MENU
from tests.desktop.conftest import open_alice

COST = "12,345 tokens in · 2,345 out · about $0.07 this conversation · $0.31 this book"


def inside(widget: QWidget, outer: QWidget) -> bool:
    top_left = widget.mapTo(outer, widget.rect().topLeft())
    return outer.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700), (1920, 1080)])
def test_cost_line_and_header_buttons_are_whole(
    window: Any, books_dir: Path, qtbot: Any, size: tuple[int, int]
) -> None:
    window.resize(*size)
    open_alice(window, books_dir)
    header = window.chat.header
    header.cost.setText(COST)
    QApplication.processEvents()
    cost = header.cost
    needed = cost.fontMetrics().horizontalAdvance(COST)

    def whole() -> bool:
        # it fits on one line, or it wraps and is tall enough for every line it wraps to
        return needed <= cost.contentsRect().width() or (
            cost.wordWrap() and cost.height() >= cost.heightForWidth(cost.width())
        )

    qtbot.waitUntil(whole, timeout=3000)  # once the layout has settled at this size
    for button in (header.new_button, header.rename_button, header.delete_button):
        assert inside(button, window.chat), button.text()
    dots = header.menu_button
    assert inside(dots, window.chat) and dots.width() >= dots.sizeHint().width()
    assert header.conversations.width() >= 120, "the conversations list stays readable"


def test_theme_menu_is_a_checkable_group_with_a_tick(window: Any, qtbot: Any) -> None:
    actions = [getattr(window, f"action_theme_{name}") for name, _ in THEME_MENU]
    assert all(a.isCheckable() for a in actions)
    group = actions[0].actionGroup()
    assert group is not None and group.isExclusive()
    assert {a.actionGroup() for a in actions} == {group}
    # a key press chooses Dark: the tick moves to it
    qtbot.keyClick(
        window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    )
    assert window.theme == "dark"
    assert [a.isChecked() for a in actions] == [n == "dark" for n, _ in THEME_MENU]
    # chosen elsewhere (Settings, a restored window): the menu shows it when it opens
    window.set_theme("sepia")
    view = window.action_theme_sepia.associatedObjects()[0]
    view.aboutToShow.emit()
    assert window.action_theme_sepia.isChecked() and not window.action_theme_dark.isChecked()


def test_a_reply_with_no_model_is_labelled_in_the_transcript(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir)
    chat = window.chat
    chat.input.setFocus()
    qtbot.keyClicks(chat.input, "Who is the Cheshire Cat?")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not chat.live and "Cheshire" in chat.transcript_text(), timeout=10000)
    text = chat.transcript_text()
    assert "Passages, no model" in text
    assert "\nMargin\n" not in f"\n{text}\n", "not presented as the assistant's answer"
