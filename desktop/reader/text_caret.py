"""The text view's caret (``view.caret``): where a screen reader reads from, kept on the
screen the reader looks at, and moved by the arrows in caret browsing (F7), the screen
following it. A part the view owns, beside its flow, pager and marks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeyEvent, QTextCursor

if TYPE_CHECKING:
    from desktop.reader.text_view import TextView

CARET_KEYS = {
    Qt.Key.Key_Right,
    Qt.Key.Key_Left,
    Qt.Key.Key_Down,
    Qt.Key.Key_Up,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
}


class Caret:
    def __init__(self, view: TextView) -> None:
        self.view = view

    def set_browsing(self, on: bool) -> None:
        """A caret the arrow keys move (Shift+arrows select), instead of turning screens."""
        view = self.view
        view.caret_browsing = on
        view.setCursorWidth(2 if on else 1)
        view.viewport().update()

    def toggle(self) -> None:
        """F7: caret browsing on or off (the typography says so, and the view tells)."""
        view = self.view
        view.typography = replace(view.typography, caret_browsing=not view.caret_browsing)
        self.set_browsing(view.typography.caret_browsing)
        view.caretBrowsingChanged.emit(view.caret_browsing)

    def to_top(self, *, force: bool = False) -> None:
        """Put the text cursor at the first line on screen (when it is off screen, or with
        ``force``): a screen reader reads from the caret, so a page turn reads the new page,
        and a "read from here" starts where the reader looks. A selection stays."""
        view, pager = self.view, self.view.pager
        cursor = view.textCursor()
        if cursor.hasSelection():
            return
        if pager.showing():
            if force or not pager.on_screen(cursor.position()):
                bar = view.verticalScrollBar()
                value = bar.value()
                cursor.setPosition(pager.columns[0].first)
                busy, view.busy = view.busy, True
                view.setTextCursor(cursor)
                bar.setValue(value)
                view.busy = busy
            return
        first, last = view.visible_range()
        if not force and first <= cursor.position() <= last:
            return
        top = view.cursorForPosition(QPoint(4, 2))
        top.movePosition(QTextCursor.MoveOperation.StartOfLine)
        if view.cursorRect(top).top() < 0:  # the line is cut at the top: the next one
            top.movePosition(QTextCursor.MoveOperation.Down)
            top.movePosition(QTextCursor.MoveOperation.StartOfLine)
        bar = view.verticalScrollBar()
        value = bar.value()
        view.setTextCursor(top)
        bar.setValue(value)  # the cursor is on screen: nothing may scroll

    def move(self, event: QKeyEvent, press: Callable[[QKeyEvent], None]) -> bool:
        """Caret browsing: the arrows move the caret (Shift selects; ``press`` is Qt's own
        key handling); a paged screen follows it. True when the paged screen was laid out."""
        view, pager = self.view, self.view.pager
        if not pager.paged:
            self._into_view()
            press(event)
            return False
        if not pager.on_screen(view.textCursor().position()):
            self.to_top(force=True)
        view.busy = True  # the hidden scroll bar follows the caret: paged screens do instead
        try:
            press(event)
            position = view.textCursor().position()
            for _ in range(20):
                if position >= pager.columns[-1].end and pager.next_page_screen():
                    continue
                if position < pager.columns[0].first and pager.previous_page_screen():
                    continue
                break
            view.verticalScrollBar().setValue(pager.offset_of(pager.columns[0]))
        finally:
            view.busy = False
        view.viewport().update()
        return True

    def _into_view(self) -> None:
        """Keyboard selection starts at the top of the screen when the caret is elsewhere."""
        view = self.view
        first, last = view.visible_range()
        cursor = view.textCursor()
        if not first <= cursor.position() <= last:
            start = view.cursorForPosition(QPoint(30, 30))
            start.movePosition(QTextCursor.MoveOperation.StartOfWord)
            view.setTextCursor(start)
