"""Reflowable books (EPUB, text, Markdown, HTML) shown as one continuous flow of their stored
pages, so reading never skips text, while page 42 here stays page 42 in search results,
citations and the spoiler bound.

The document and its positions are ``text_flow.PageFlow``; marks, highlights and the
selection ``text_marks.TextMarks``, a part the view owns (``self.marks``). This view shows a place, scrolls a screen at a time,
keeps the same words at the top when it is laid out again (resized, shown, restyled), and
says which stored page is at the top and whether the reader moved it there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QResizeEvent, QShowEvent, QTextCursor
from PySide6.QtWidgets import QWidget

from core.books.model import PageContent
from desktop.reader.paged import line_at
from desktop.reader.paged_view import PAD, PagedFlow
from desktop.reader.picture_text import picture_at, picture_name
from desktop.reader.reading_keys import claims, reading_move
from desktop.reader.text_marks import Span
from desktop.reader.typography import Typography
from desktop.theme import THEMES
from desktop.widgets import history_button

__all__ = ["Span", "TextView"]


class TextView(PagedFlow):
    topPageChanged = Signal(int, bool)  # stored page at the top, True when the reader scrolled
    caretBrowsingChanged = Signal(bool)  # F7 turned caret browsing on or off
    requestBack = Signal()
    requestForward = Signal()
    imageOpened = Signal(str)  # book: url of an image the reader clicked
    # a click on the text (a highlight's id, 0 for none) or Enter on a highlight: where, and
    # True when a key did it
    highlightClicked = Signal(int, QPoint, bool)

    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(book_file, fmt, parent)
        self._top = 0
        self._anchor: tuple[int, int] | None = None  # (page, offset) at the top of the screen
        self._turning = False  # a screen turn: the caret goes to the new screen's top
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        # Qt lays a document out again (when the view is first shown, or finishes a large
        # layout later) and moves the scroll bar's range under the reader: that is no
        # scrolling, the same words stay at the top
        self.verticalScrollBar().rangeChanged.connect(self._relaid_out)
        self._resize_timer = QTimer(self, singleShot=True, interval=120)
        self._resize_timer.timeout.connect(self._rerender_keep_place)

    def set_theme(self, name: str) -> None:
        self.theme = THEMES.get(name, THEMES["light"])
        self.setStyleSheet(
            f"QTextBrowser {{ background: {self.theme.background}; color: {self.theme.text}; }}"
        )
        self._rerender_keep_place()

    def set_font_size(self, size: int) -> None:
        self.font_size = max(8, min(size, 40))
        self.forget_screens()
        self._rerender_keep_place()

    def set_typography(self, typography: Typography) -> None:
        """Font, spacing, measure and justification; the reader keeps its place."""
        self.typography = typography
        self.font_size = max(8, min(typography.font_size, 40))
        self.forget_screens()
        self._rerender_keep_place()

    def _sync_mode(self) -> None:
        """Paged or scrolling, and caret browsing, as the typography says."""
        self.paged = self.typography.layout == "paged"
        self.set_caret_browsing(self.typography.caret_browsing)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if self.paged
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        if not self.paged:
            self._columns = []

    def set_caret_browsing(self, on: bool) -> None:
        """A caret the arrow keys move (Shift+arrows select), instead of turning screens."""
        self.caret_browsing = on
        self.setCursorWidth(2 if on else 1)
        self.viewport().update()

    def show_page(
        self, page: PageContent, highlights: list[tuple[str, str]] | None = None, mark: str = ""
    ) -> None:
        """Show one page on its own (no loader): kept for simple callers."""
        if self._loader is None:
            self._loader = lambda n: page
            self.page_count = max(self.page_count, page.number)
        if highlights is not None:
            self.marks.spans = [Span(page.number, t, c) for t, c in highlights]
        self.show_at(page.number, mark=mark)

    def show_at(
        self, page: int, offset: int = 0, *, mark: str = "", nth: int = 0, near: int = -1
    ) -> bool:
        """Load the flow around ``page`` and put ``offset`` of it at the top of the screen, or
        centre ``mark`` (searched from that page on, then just before; with ``near``, the
        occurrence closest to that offset of the page). True when marked."""
        if self._loader is None or not self.page_count:
            return False
        page = max(1, min(page, self.page_count))
        self._sync_mode()
        self._busy = True
        try:
            self._reset(page)
            self.mark_range = None
            self.marks.text = mark
            found = False
            if mark:
                found = self.marks.place(page, mark, nth, near)
            if not found:
                self._scroll_to_position(self._pos(page, offset))
            self._fill()
            self.marks.decorate()
            self.marks.pinned = found
            # the place asked for, not what the top line shows now: a view not yet at its
            # final size (or shown) lays it out again later, and must keep this place
            self._anchor = (
                self.top_position() if found else self.page_offset(self._pos(page, offset))
            )
            if self.paged:
                self._lay_place(self._anchor, found)
            if not (found and self.marks.caret_at_mark()):  # a citation: read from its passage
                self._caret_to_top(force=not found)
        finally:
            self._busy = False
        self._update_top(user=False)
        return found

    def _lay_place(self, anchor: tuple[int, int], marked: bool) -> None:
        """The paged screen for a place: starting at its line, or for a mark the screen
        that starts with its paragraph (or its line, when the paragraph is long)."""
        position = self._pos(*anchor)
        if marked and self.mark_range is not None:
            position = self.mark_range[0]
            block = self.document().findBlock(position)
            line = line_at(self.document(), position)
            if line is not None and line.top - self._y(block.position()) < self.page_height() / 3:
                position = block.position()
        self._go_screen(self.page_offset(position))
        self._anchor = self.screen_start()

    def _caret_to_top(self, *, force: bool = False) -> None:
        """Put the text cursor at the first line on screen (when it is off screen, or with
        ``force``): a screen reader reads from the caret, so a page turn reads the new page,
        and a "read from here" starts where the reader looks. A selection stays."""
        cursor = self.textCursor()
        if cursor.hasSelection():
            return
        if self.paged and self._columns:
            if force or not self.on_screen(cursor.position()):
                bar = self.verticalScrollBar()
                value = bar.value()
                cursor.setPosition(self._columns[0].first)
                busy, self._busy = self._busy, True
                self.setTextCursor(cursor)
                bar.setValue(value)
                self._busy = busy
            return
        first, last = self.visible_range()
        if not force and first <= cursor.position() <= last:
            return
        top = self.cursorForPosition(QPoint(4, 2))
        top.movePosition(QTextCursor.MoveOperation.StartOfLine)
        if self.cursorRect(top).top() < 0:  # the line is cut at the top: the next one
            top.movePosition(QTextCursor.MoveOperation.Down)
            top.movePosition(QTextCursor.MoveOperation.StartOfLine)
        bar = self.verticalScrollBar()
        value = bar.value()
        self.setTextCursor(top)
        bar.setValue(value)  # the cursor is on screen: nothing may scroll

    def _rerender_keep_place(self) -> None:
        if not self.loaded:
            return
        page, offset = self._anchor or self.top_position()
        pinned = self.marks.pinned
        mark = (
            (self.page_offset(self.mark_range[0]), self.page_offset(self.mark_range[1]))
            if self.mark_range is not None
            else None
        )
        self.show_at(page, offset)
        if mark is not None and mark[0][0] in self.loaded and mark[1][0] in self.loaded:
            self.mark_range = (self._pos(*mark[0]), self._pos(*mark[1]))
            if pinned and self.paged:
                self._lay_place(self._anchor or (page, offset), True)
                self.marks.pinned = True
            elif pinned:
                self._busy = True
                try:
                    self._scroll_to_position(self.mark_range[0], centre=True)
                    self._fill()
                finally:
                    self._busy = False
                self.marks.pinned = True
            self.marks.decorate()

    def showEvent(self, event: QShowEvent) -> None:
        # on its first showing QTextEdit scrolls to the text cursor (where the last page was
        # appended): not the reader's doing, and the place must not move
        self._busy = True
        try:
            super().showEvent(event)
        finally:
            self._busy = False
        self._relaid_out()

    def resizeEvent(self, event: QResizeEvent) -> None:
        if not self.loaded or self._busy:
            super().resizeEvent(event)
            return
        if self.paged:
            self._busy = True
            try:
                super().resizeEvent(event)
                self._apply_geometry()
                self.forget_screens()  # other sizes, other screens
            finally:
                self._busy = False
            if self._images and event.oldSize().width() != event.size().width():
                self._resize_timer.start()
            self._relay()
            return
        self._busy = True  # scrolls caused by the rewrap are not the reader's
        try:
            super().resizeEvent(event)
            if event.oldSize().width() != event.size().width():
                self._apply_column()
            if self._images and event.oldSize().width() != event.size().width():
                self._resize_timer.start()
            # the text has been rewrapped: keep the same words at the top (or the mark centred)
            if self.mark_range is not None and self.marks.pinned:
                self._scroll_to_position(self.mark_range[0], centre=True)
            elif self._anchor is not None and self._anchor[0] in self.loaded:
                self._scroll_to_position(self._pos(*self._anchor))
            self._fill()
        finally:
            self._busy = False

    def _relay(self) -> None:
        """Lay the paged screen out again at the same place (or around the pinned mark)."""
        if not self.paged or not self.loaded:
            return
        pinned = self.mark_range is not None and self.marks.pinned
        if pinned or self._anchor is not None:
            self._lay_place(self._anchor or self.screen_start(), pinned)
            self.marks.pinned = pinned
        self._update_top(user=False)

    def _scrolled(self, value: int) -> None:
        if self._busy or not self.loaded:
            return
        if self.paged and self._columns and self.on_screen(self.textCursor().position()):
            # Qt showing the text cursor (set after a highlight, or a click) as it would in
            # one column: a cursor in the second column is already on screen, nothing moves
            self._busy = True
            try:
                self.verticalScrollBar().setValue(self._offset_of(self._columns[0]))
            finally:
                self._busy = False
            return
        if self.paged:  # something scrolled the hidden bar: show the screen there
            self._busy = True
            try:
                top = self.cursorForPosition(QPoint(4, PAD + 2)).position()
                self._go_screen(self.page_offset(top))
                self._anchor = self.screen_start()
                self._caret_to_top()
            finally:
                self._busy = False
            self._update_top(user=True)
            return
        self._busy = True
        try:
            self._fill()
            self._anchor = self.top_position()
            self.marks.pinned = False
            self._caret_to_top(force=self._turning)
        finally:
            self._busy = False
        self._update_top(user=True)

    def _relaid_out(self, *_: int) -> None:
        if self._busy or not self.loaded:
            return
        if self.paged:
            self._relay()
            return
        self._busy = True
        try:
            if self.mark_range is not None and self.marks.pinned:
                self._scroll_to_position(self.mark_range[0], centre=True)
            elif self._anchor is not None and self._anchor[0] in self.loaded:
                self._scroll_to_position(self._pos(*self._anchor))
        finally:
            self._busy = False

    def _update_top(self, *, user: bool) -> None:
        page = self.top_page()
        if page and self._loader is not None and (self.page is None or page != self.page.number):
            self.page = self._loader(page)
            self.topPageChanged.emit(page, user)

    def show_end_of(self, page: int) -> None:
        """Scroll so that the end of stored ``page`` is at the bottom of the screen."""
        if page not in self.loaded:
            return
        i = self.loaded.index(page)
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self._end()
        if self.paged:
            self._busy = True
            try:
                self.end_screen_of(end + 1 if i + 1 < len(self.starts) else self._end() + 1)
                self._anchor = self.screen_start()
            finally:
                self._busy = False
            self._update_top(user=False)
            return
        bar = self.verticalScrollBar()
        bar.setValue(
            int(max(0, self._y(end) + self.line_height() * 1.5 - self.viewport().height()))
        )

    # screens ---------------------------------------------------------------------------

    def next_screen(self) -> bool:
        """Move one screen on, keeping the last line in view; False at the end of the book."""
        if self.paged:
            return self._paged_turn(self.next_page_screen)
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.line_height() * 1.6))
        if bar.value() >= bar.maximum():
            return False
        self._turn(bar.value() + step)
        return True

    def previous_screen(self) -> bool:
        if self.paged:
            return self._paged_turn(self.previous_page_screen)
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.line_height() * 1.6))
        if bar.value() <= 0:
            return False
        self._turn(bar.value() - step)
        return True

    def _paged_turn(self, turn: Callable[[], bool]) -> bool:
        self.turn_most = 2
        self._busy = True
        try:
            if not turn():
                return False
            self._anchor = self.screen_start()
            self.marks.pinned = False
            self._caret_to_top(force=True)
        finally:
            self._busy = False
        self._update_top(user=True)
        return True

    def _turn(self, value: int) -> None:
        """Scroll a screen: the caret goes to the top of the new screen."""
        self._turning = True
        try:
            self.verticalScrollBar().setValue(value)
        finally:
            self._turning = False

    # keys and mouse ---------------------------------------------------------------------

    chapterEdge = Signal(bool)  # True: go to the chapter's end, False: its start

    def event(self, event: QEvent) -> bool:
        if claims(event):
            event.accept()  # the view turns screens before the window's page actions
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods == Qt.KeyboardModifier.NoModifier and key == Qt.Key.Key_F7:
            self.typography = replace(self.typography, caret_browsing=not self.caret_browsing)
            self.set_caret_browsing(self.typography.caret_browsing)
            self.caretBrowsingChanged.emit(self.caret_browsing)
            return
        if self.caret_browsing and key in self._CARET_KEYS:
            self._move_caret(event)
            return
        move = reading_move(event, self.rtl)
        if move in ("next", "previous"):
            self.next_screen() if move == "next" else self.previous_screen()
            return
        if move in ("start", "end"):
            self.chapterEdge.emit(move == "end")
            return
        if mods & Qt.KeyboardModifier.ShiftModifier and key in self._CARET_KEYS:
            self._move_caret(event)
            return
        cursor = self.textCursor()
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not cursor.hasSelection()
        if enter and (hid := self.highlight_at(cursor.position())):  # the one at the caret
            self.highlightClicked.emit(hid, self.cursorRect().bottomLeft(), True)
            return
        super().keyPressEvent(event)

    _CARET_KEYS = {
        Qt.Key.Key_Right,
        Qt.Key.Key_Left,
        Qt.Key.Key_Down,
        Qt.Key.Key_Up,
        Qt.Key.Key_Home,
        Qt.Key.Key_End,
    }

    def _move_caret(self, event: QKeyEvent) -> None:
        """Caret browsing: the arrows move the caret (Shift selects); the screen follows it."""
        if not self.paged:
            self._caret_into_view()
            super().keyPressEvent(event)
            return
        if not self.on_screen(self.textCursor().position()):
            self._caret_to_top(force=True)
        self._busy = True  # the hidden scroll bar follows the caret: paged screens do instead
        try:
            super().keyPressEvent(event)
            position = self.textCursor().position()
            for _ in range(20):
                if position >= self._columns[-1].end and self.next_page_screen():
                    continue
                if position < self._columns[0].first and self.previous_page_screen():
                    continue
                break
            self.verticalScrollBar().setValue(self._offset_of(self._columns[0]))
            self._anchor = self.screen_start()
        finally:
            self._busy = False
        self.viewport().update()
        self._update_top(user=True)

    def _caret_into_view(self) -> None:
        """Keyboard selection starts at the top of the screen when the caret is elsewhere."""
        first, last = self.visible_range()
        cursor = self.textCursor()
        if not first <= cursor.position() <= last:
            start = self.cursorForPosition(QPoint(30, 30))
            start.movePosition(QTextCursor.MoveOperation.StartOfWord)
            self.setTextCursor(start)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not history_button(self, event):
            super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click on a highlight (no drag, no selection) opens its bar, not a page turn."""
        press, point = self._press, event.position()
        click = (
            press is not None
            and not press[1]
            and event.button() == Qt.MouseButton.LeftButton
            and (point - press[0]).manhattanLength() <= 4
        )
        hid = self.highlight_at(self.cursor_at(point.toPoint()).position()) if click else 0
        if hid:
            self._press = None  # no page turn in the click zones
        super().mouseReleaseEvent(event)
        if click and not self.textCursor().hasSelection():
            self.highlightClicked.emit(hid, point.toPoint(), False)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        point = event.position().toPoint()
        name = picture_name(self.cursor_at(point).charFormat())
        if not name and self._pictures:  # a picture drawn over its line (picture_text)
            name = picture_at(self.document(), self.document_point(point))
        if name:
            self.imageOpened.emit(name)
            return
        super().mouseDoubleClickEvent(event)
