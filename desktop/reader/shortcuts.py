"""Keys that work anywhere in the reader (the window's menu has the others)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from desktop.reader.selection_bar import BAR_COLOURS

if TYPE_CHECKING:
    from desktop.reader.reader import Reader


def install_shortcuts(reader: Reader) -> dict[str, QAction]:
    """Add the reader's shortcuts to it (active while focus is inside); returns them by key."""
    find, act = reader.side.finder, reader.selection_actions.act
    # (keys, what they do: the shortcut list shows it, slot)
    table: list[tuple[str, str, Callable[..., object]]] = [
        ("Alt+Left", "Back to where you were", reader.go_back),
        ("Alt+Right", "Forward again", reader.go_forward),
        ("F3", "Next match of Find", lambda: find.step(1)),
        ("Shift+F3", "Previous match of Find", lambda: find.step(-1)),
        ("Ctrl+Shift+D", "Define the selection", lambda: act("define")),
        ("Ctrl+Shift+S", "Summarize the selection", lambda: act("summarize")),
        ("Ctrl+Shift+T", "Translate the selection", lambda: act("translate")),
        ("Ctrl+Shift+R", "Read to here (I have read up to here)", reader.mark_read_to_here),
    ]
    for i, colour in enumerate(BAR_COLOURS, start=1):
        table.append(
            (
                f"Ctrl+{i}",
                f"Highlight the selection in {colour}",
                # triggered(bool) would fill a first default argument with False
                lambda _checked=False, c=colour: act(f"highlight:{c}"),
            )
        )
    actions: dict[str, QAction] = {}
    for keys, text, slot in table:
        action = QAction(text, reader)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        reader.addAction(action)
        actions[keys] = action
    return actions
