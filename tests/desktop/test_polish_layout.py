"""The chat's composer row stacks in a narrow pane, so at 1024 px the side panel opens beside
the book without taking it below 55 % of the window (issue 32 leftover)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.store.library import Library
from desktop.chat.composer import Composer
from tests.desktop.reader.conftest import alice_window


def test_the_composer_row_stacks_when_narrow_and_keeps_one_row_when_wide(qtbot: Any) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.resize(420, 160)
    composer.show()
    qtbot.waitExposed(composer)
    assert not composer.stacked()
    one_row = composer._layout.minimumSize().width()
    assert composer.minimumSizeHint().width() < one_row - 60, "narrower than the one row"
    composer.resize(composer.minimumSizeHint().width(), 200)
    QApplication.processEvents()
    assert composer.stacked()
    send = composer.send_button.geometry()
    spoilers = composer.spoilers.geometry()
    assert send.top() > spoilers.bottom(), "the buttons go under the spoiler choice"
    assert send.right() <= composer.width() and spoilers.right() <= composer.width()
    composer.spoilers.setCurrentIndex(1)  # "Up to page…": the page box shows, still inside
    QApplication.processEvents()
    assert composer.spoiler_page.geometry().right() <= composer.width() + 1
    composer.resize(420, 200)
    QApplication.processEvents()
    assert not composer.stacked()


def test_at_1024_the_chat_and_side_panel_leave_the_book_its_share(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with alice_window(library, books_dir, qtbot, 12) as (win, _book):
        win.resize(1024, 700)
        win.panes.set_side_visible(False)
        QApplication.processEvents()
        win.reader.view.setFocus()
        qtbot.keyClick(win.reader.view, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: win.reader.side.width() >= 160, timeout=2000)
        qtbot.wait(50)
        assert win.reader.split.sizes()[1] >= 0.55 * 1024 - 1
        composer = win.chat.composer
        assert composer.stacked()
        send = composer.send_button
        assert send.isVisible() and send.mapTo(composer, send.rect().bottomRight()).x() <= (
            composer.width()
        )
