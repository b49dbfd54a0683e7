"""The reading keys: one table for every view of a book (text, PDF, image pages), so a key
does the same thing whatever the book's format.

A key names a move, and each view says how it makes it: "next" and "previous" turn a
screen (a view that scrolls shows the next screenful with a line kept; a view of whole
pages shows the next page or spread); "left" and "right" turn towards that side, forward
to the right, or to the left in a book whose pages turn right to left; "start" and "end"
go to the start or the end of the chapter (of the book, when it has no chapters).

The view claims these keys before the window's shortcuts (``claims``): Page Down in the
book turns a screen, not the View menu's page.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence

NONE = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier

# (key, modifiers, move, what it does: the shortcut list shows it)
READING_KEYS: tuple[tuple[Qt.Key, Qt.KeyboardModifier, str, str], ...] = (
    (Qt.Key.Key_PageDown, NONE, "next", "The next screen"),
    (Qt.Key.Key_Space, NONE, "next", "The next screen"),
    (Qt.Key.Key_Down, NONE, "next", "The next screen"),
    (Qt.Key.Key_PageDown, SHIFT, "next", "The next screen"),
    (Qt.Key.Key_PageUp, NONE, "previous", "The previous screen"),
    (Qt.Key.Key_Space, SHIFT, "previous", "The previous screen"),
    (Qt.Key.Key_Up, NONE, "previous", "The previous screen"),
    (Qt.Key.Key_Backspace, NONE, "previous", "The previous screen"),
    (Qt.Key.Key_Right, NONE, "right", "The screen to the right (back in a right-to-left book)"),
    (Qt.Key.Key_Left, NONE, "left", "The screen to the left (on in a right-to-left book)"),
    (Qt.Key.Key_Home, NONE, "start", "The start of the chapter"),
    (Qt.Key.Key_End, NONE, "end", "The end of the chapter"),
)
_MOVES = {(key, int(mods.value)): move for key, mods, move, _ in READING_KEYS}
_KEYS = {key for key, _, _, _ in READING_KEYS}


def _mods(event: QKeyEvent) -> Qt.KeyboardModifier:
    return event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier


def reading_move(event: QKeyEvent, rtl: bool = False) -> str | None:
    """The move a key press makes ("next", "previous", "start", "end"), None for other
    keys; Left and Right are resolved by the direction the pages turn."""
    move = _MOVES.get((Qt.Key(event.key()), int(_mods(event).value)))
    if move == "right":
        return "previous" if rtl else "next"
    if move == "left":
        return "next" if rtl else "previous"
    return move


def claims(event: QEvent) -> bool:
    """True for a ShortcutOverride of a reading key (plain or with Shift, which selects in
    text): the view takes it before the window's shortcuts."""
    return (
        event.type() == QEvent.Type.ShortcutOverride
        and isinstance(event, QKeyEvent)
        and event.key() in _KEYS
        and _mods(event) in (NONE, SHIFT)
    )


def key_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the shortcut list, one row per move."""
    rows: dict[str, list[str]] = {}
    for key, mods, _, what in READING_KEYS:
        name = QKeySequence(int(mods.value) | int(key.value)).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        rows.setdefault(what, []).append(name)
    return [(" or ".join(keys), what) for what, keys in rows.items()]
