"""The companion-tab tests' window: Alice read to a page in a shown window with the side panel
open (``window_at``), the same talking to the fake Claude (``claude_window``), a real click on a
side tab, and the light/dark screenshots (only with MARGIN_SHOTS)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.library import Library
from tests.support.shots import save_shot, shots_wanted


@contextmanager
def window_at(library: Library, books_dir: Path, qtbot: Any, read_to: int) -> Iterator[Any]:
    from core.app import Margin
    from desktop.window.main_window import MainWindow
    from tests.desktop.conftest import close_window

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, read_to)
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(1300, 850)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id)
        win.panes.set_side_visible(True)
        yield win, book
    finally:
        close_window(qtbot, win)


@pytest.fixture
def claude_window(
    library: Library,
    books_dir: Path,
    qtbot: Any,
    real_font: str,
    fake_anthropic: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Any, Any]]:
    """(window, book): Alice read to p. 33, the window answering from the fake Claude with
    connect_claude's key."""
    from tests.desktop.conftest import connect_claude

    with window_at(library, books_dir, qtbot, 33) as (win, book):
        connect_claude(win, fake_anthropic, monkeypatch)
        yield win, book


def priced_model(win: Any) -> None:
    """The fake Claude taken for a model with a price (claude-haiku-4-5): costs are shown."""
    service = win.app.agent
    service.update_settings(dataclasses.replace(service.settings, model="claude-haiku-4-5"))


def click_tab(win: Any, name: str) -> None:
    button = win.reader.side.rows.button(name)
    assert button is not None, name
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def shoot(win: Any, name: str) -> None:
    """With MARGIN_SHOTS set: the window in the light and dark themes."""
    if not shots_wanted():
        return
    for theme in ("light", "dark"):
        win.set_theme(theme)
        QTest.qWait(50)
        save_shot(win.grab(), f"companions-{name}_{theme}.png")
    win.set_theme("light")
