"""Reflowable books (EPUB, text, Markdown, HTML) shown as one continuous flow of their stored
pages, so reading never skips text, while page 42 here stays page 42 in search results,
citations and the spoiler bound.

The view is a ``QTextBrowser`` made of parts it owns, none a base class: ``flow`` (the
document's stored pages and their positions, text_flow.py), ``pager`` (paged screens,
paged_view.py), ``marks`` (marks, highlights, the selection, text_marks.py) and ``caret``
(text_caret.py). This view shows a place, scrolls a screen at a time, keeps the same words
at the top when laid out again (resized, shown, restyled), and says which stored page is at
the top and whether the reader moved it there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QPoint, QRect, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QKeyEvent,
    QMouseEvent,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
    QTextCursor,
    QWheelEvent,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from desktop.reader.paged import line_at
from desktop.reader.paged_view import PAD, Pager
from desktop.reader.picture_text import selection_text
from desktop.reader.readable_text import ReadAsDocument
from desktop.reader.reading_keys import claims, reading_move
from desktop.reader.text_caret import CARET_KEYS, Caret
from desktop.reader.text_flow import PageFlow
from desktop.reader.text_marks import Span, TextMarks
from desktop.reader.typography import Typography
from desktop.theme import THEMES, Theme
from desktop.widgets import history_button

__all__ = ["Span", "TextView"]


class TextView(QTextBrowser, metaclass=ReadAsDocument):  # read as a document: readable_text
    topPageChanged = Signal(int, bool)  # stored page at the top, True when the reader scrolled
    caretBrowsingChanged = Signal(bool)  # F7 turned caret browsing on or off
    requestBack = Signal()
    requestForward = Signal()
    imageOpened = Signal(str)  # book: url of an image the reader clicked
    linkOpened = Signal(str)
    pageLinkOpened = Signal(int)  # a note reference or a note's back link: its page
    # a click on the text (a highlight's id, 0 for none) or Enter on a highlight: where, and
    # True when a key did it
    highlightClicked = Signal(int, QPoint, bool)

    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Book page")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.theme: Theme = THEMES["light"]
        self.font_size = 13
        self.typography = Typography()
        self.caret_browsing = False
        self.busy = False  # the view moves itself: no scroll here is the reader's
        # the parts: the document's window of stored pages, the paged screens, the marks
        self.flow = PageFlow(self, book_file, fmt)
        self.pager = Pager(self)
        self.marks = TextMarks(self)
        self.caret = Caret(self)  # where a screen reader reads from, and caret browsing
        self.anchorClicked.connect(self.flow.follow)
        self.document().setDocumentMargin(28)
        self._anchor: tuple[int, int] | None = None  # (page, offset) at the top of the screen
        self._turning = False  # a screen turn: the caret goes to the new screen's top
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        # Qt lays a document out again (when the view is first shown, or finishes a large
        # layout later) and moves the scroll bar's range under the reader: that is no
        # scrolling, the same words stay at the top
        self.verticalScrollBar().rangeChanged.connect(self._relaid_out)
        self._resize_timer = QTimer(self, singleShot=True, interval=120)
        self._resize_timer.timeout.connect(self._rerender_keep_place)

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        return self.flow.resource(QUrl(url) if isinstance(url, str) else url)

    def set_theme(self, name: str) -> None:
        self.theme = THEMES.get(name, THEMES["light"])
        self.setStyleSheet(
            f"QTextBrowser {{ background: {self.theme.background}; color: {self.theme.text}; }}"
        )
        self._rerender_keep_place()

    def set_font_size(self, size: int) -> None:
        self.font_size = max(8, min(size, 40))
        self.pager.forget_screens()
        self._rerender_keep_place()

    def set_typography(self, typography: Typography) -> None:
        """Font, spacing, measure and justification; the reader keeps its place."""
        self.typography = typography
        self.font_size = max(8, min(typography.font_size, 40))
        self.pager.forget_screens()
        self._rerender_keep_place()

    def _sync_mode(self) -> None:
        """Paged or scrolling, and caret browsing, as the typography says."""
        self.pager.paged = self.typography.layout == "paged"
        self.caret.set_browsing(self.typography.caret_browsing)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if self.pager.paged
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        if not self.pager.paged:
            self.pager.columns = []

    def show_at(
        self, page: int, offset: int = 0, *, mark: str = "", nth: int = 0, near: int = -1
    ) -> bool:
        """Load the flow around ``page`` and put ``offset`` of it at the top of the screen, or
        centre ``mark`` (searched from that page on, then just before; with ``near``, the
        occurrence closest to that offset of the page). True when marked."""
        if self.flow.loader is None or not self.flow.page_count:
            return False
        page = max(1, min(page, self.flow.page_count))
        self._sync_mode()
        self.busy = True
        try:
            self.flow.reset(page)
            self.flow.mark_range = None
            self.marks.text = mark
            found = False
            if mark:
                found = self.marks.place(page, mark, nth, near)
            if not found:
                self.flow.scroll_to_position(self.flow.pos(page, offset))
            self.flow.fill()
            self.marks.decorate()
            self.marks.pinned = found
            # the place asked for, not what the top line shows now: a view not yet at its
            # final size (or shown) lays it out again later, and must keep this place
            place = self.flow.page_offset(self.flow.pos(page, offset))
            self._anchor = self.top_position() if found else place
            if self.pager.paged:
                self._lay_place(self._anchor, found)
            if not (found and self.marks.caret_at_mark()):  # a citation: read from its passage
                self.caret.to_top(force=not found)
        finally:
            self.busy = False
        self._update_top(user=False)
        return found

    def _lay_place(self, anchor: tuple[int, int], marked: bool) -> None:
        """The paged screen for a place: starting at its line, or for a mark the screen
        that starts with its paragraph (or its line, when the paragraph is long)."""
        flow = self.flow
        position = flow.pos(*anchor)
        if marked and flow.mark_range is not None:
            position = flow.mark_range[0]
            block = self.document().findBlock(position)
            line = line_at(self.document(), position)
            third = self.pager.page_height() / 3
            if line is not None and line.top - flow.y_of(block.position()) < third:
                position = block.position()
        self.pager.go_screen(self.flow.page_offset(position))
        self._anchor = self.pager.screen_start()

    def _rerender_keep_place(self) -> None:
        if not self.flow.loaded:
            return
        page, offset = self._anchor or self.top_position()
        pinned, flow = self.marks.pinned, self.flow
        marked = flow.mark_range
        mark = (flow.page_offset(marked[0]), flow.page_offset(marked[1])) if marked else None
        self.show_at(page, offset)
        if mark is not None and mark[0][0] in flow.loaded and mark[1][0] in flow.loaded:
            flow.mark_range = (flow.pos(*mark[0]), flow.pos(*mark[1]))
            if pinned and self.pager.paged:
                self._lay_place(self._anchor or (page, offset), True)
                self.marks.pinned = True
            elif pinned:
                self.busy = True
                try:
                    self.flow.scroll_to_position(flow.mark_range[0], centre=True)
                    self.flow.fill()
                finally:
                    self.busy = False
                self.marks.pinned = True
            self.marks.decorate()

    def showEvent(self, event: QShowEvent) -> None:
        # on its first showing QTextEdit scrolls to the text cursor (where the last page was
        # appended): not the reader's doing, and the place must not move
        self.busy = True
        try:
            super().showEvent(event)
        finally:
            self.busy = False
        self._relaid_out()

    def resizeEvent(self, event: QResizeEvent) -> None:
        if not self.flow.loaded or self.busy:
            super().resizeEvent(event)
            return
        if self.pager.paged:
            self.busy = True
            try:
                super().resizeEvent(event)
                self.pager.apply_geometry()
                self.pager.forget_screens()  # other sizes, other screens
            finally:
                self.busy = False
            if self.flow.images and event.oldSize().width() != event.size().width():
                self._resize_timer.start()
            self._relay()
            return
        self.busy = True  # scrolls caused by the rewrap are not the reader's
        try:
            super().resizeEvent(event)
            if event.oldSize().width() != event.size().width():
                self.pager.apply_column()
            if self.flow.images and event.oldSize().width() != event.size().width():
                self._resize_timer.start()
            # the text has been rewrapped: keep the same words at the top (or the mark centred)
            if self.flow.mark_range is not None and self.marks.pinned:
                self.flow.scroll_to_position(self.flow.mark_range[0], centre=True)
            elif self._anchor is not None and self._anchor[0] in self.flow.loaded:
                self.flow.scroll_to_position(self.flow.pos(*self._anchor))
            self.flow.fill()
        finally:
            self.busy = False

    def _relay(self) -> None:
        """Lay the paged screen out again at the same place (or around the pinned mark)."""
        if not self.pager.paged or not self.flow.loaded:
            return
        pinned = self.flow.mark_range is not None and self.marks.pinned
        if pinned or self._anchor is not None:
            self._lay_place(self._anchor or self.pager.screen_start(), pinned)
            self.marks.pinned = pinned
        self._update_top(user=False)

    def _scrolled(self, value: int) -> None:
        if self.busy or not self.flow.loaded:
            return
        if self.pager.showing() and self.pager.on_screen(self.textCursor().position()):
            # Qt showing the text cursor (set after a highlight, or a click) as it would in
            # one column: a cursor in the second column is already on screen, nothing moves
            self.busy = True
            try:
                self.verticalScrollBar().setValue(self.pager.offset_of(self.pager.columns[0]))
            finally:
                self.busy = False
            return
        if self.pager.paged:  # something scrolled the hidden bar: show the screen there
            self.busy = True
            try:
                top = self.cursorForPosition(QPoint(4, PAD + 2)).position()
                self.pager.go_screen(self.flow.page_offset(top))
                self._anchor = self.pager.screen_start()
                self.caret.to_top()
            finally:
                self.busy = False
            self._update_top(user=True)
            return
        self.busy = True
        try:
            self.flow.fill()
            self._anchor = self.top_position()
            self.marks.pinned = False
            self.caret.to_top(force=self._turning)
        finally:
            self.busy = False
        self._update_top(user=True)

    def _relaid_out(self, *_: int) -> None:
        if self.busy or not self.flow.loaded:
            return
        if self.pager.paged:
            self._relay()
            return
        self.busy = True
        try:
            if self.flow.mark_range is not None and self.marks.pinned:
                self.flow.scroll_to_position(self.flow.mark_range[0], centre=True)
            elif self._anchor is not None and self._anchor[0] in self.flow.loaded:
                self.flow.scroll_to_position(self.flow.pos(*self._anchor))
        finally:
            self.busy = False

    def _update_top(self, *, user: bool) -> None:
        page, flow = self.top_page(), self.flow
        if page and flow.loader is not None and (flow.page is None or page != flow.page.number):
            flow.page = flow.loader(page)
            self.topPageChanged.emit(page, user)

    def show_end_of(self, page: int) -> None:
        """Scroll so that the end of stored ``page`` is at the bottom of the screen."""
        flow = self.flow
        if page not in flow.loaded:
            return
        i = flow.loaded.index(page)
        end = flow.starts[i + 1] - 1 if i + 1 < len(flow.starts) else flow.end_position()
        if self.pager.paged:
            self.busy = True
            try:
                self.pager.end_screen_of(end + 1)
                self._anchor = self.pager.screen_start()
            finally:
                self.busy = False
            self._update_top(user=False)
            return
        bottom = flow.y_of(end) + flow.line_height() * 1.5 - self.viewport().height()
        self.verticalScrollBar().setValue(int(max(0, bottom)))

    # screens ---------------------------------------------------------------------------

    def next_screen(self) -> bool:
        """Move one screen on, keeping the last line in view; False at the end of the book."""
        if self.pager.paged:
            return self._paged_turn(self.pager.next_page_screen)
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.flow.line_height() * 1.6))
        if bar.value() >= bar.maximum():
            return False
        self._turn(bar.value() + step)
        return True

    def previous_screen(self) -> bool:
        if self.pager.paged:
            return self._paged_turn(self.pager.previous_page_screen)
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.flow.line_height() * 1.6))
        if bar.value() <= 0:
            return False
        self._turn(bar.value() - step)
        return True

    def _paged_turn(self, turn: Callable[[], bool]) -> bool:
        self.pager.turn_most = 2
        self.busy = True
        try:
            if not turn():
                return False
            self._anchor = self.pager.screen_start()
            self.marks.pinned = False
            self.caret.to_top(force=True)
        finally:
            self.busy = False
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
            self.caret.toggle()
            return
        if self.caret_browsing and key in CARET_KEYS:
            self._move_caret(event)
            return
        move = reading_move(event, self.pager.rtl)
        if move in ("next", "previous"):
            self.next_screen() if move == "next" else self.previous_screen()
            return
        if move in ("start", "end"):
            self.chapterEdge.emit(move == "end")
            return
        if mods & Qt.KeyboardModifier.ShiftModifier and key in CARET_KEYS:
            self._move_caret(event)
            return
        cursor = self.textCursor()
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not cursor.hasSelection()
        if enter and (hid := self.marks.highlight_at(cursor.position())):  # the one at the caret
            self.highlightClicked.emit(hid, self.cursorRect().bottomLeft(), True)
            return
        super().keyPressEvent(event)

    def _move_caret(self, event: QKeyEvent) -> None:
        if self.caret.move(event, super().keyPressEvent):  # a paged screen followed the caret
            self._anchor = self.pager.screen_start()
            self._update_top(user=True)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not history_button(self, event):
            self.pager.press = (event.position(), self.textCursor().hasSelection())
            self.pager.route(event, super().mousePressEvent)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self.pager.route(event, super().mouseMoveEvent)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click on a highlight (no drag, no selection) opens its bar, not a page turn; a
        click in a paged screen's outer part turns it."""
        press, point = self.pager.press, event.position()
        self.pager.press = None
        click = (
            press is not None
            and not press[1]
            and event.button() == Qt.MouseButton.LeftButton
            and (point - press[0]).manhattanLength() <= 4
        )
        hid = 0
        if click:
            hid = self.marks.highlight_at(self.pager.cursor_at(point.toPoint()).position())
        link = self.pager.link_under(point)
        self.pager.route(event, super().mouseReleaseEvent)
        if not hid:  # a highlight's click opens its bar: no page turn in the click zones
            self.pager.turn_by_click(event, press, link)
        if click and not self.textCursor().hasSelection():
            self.highlightClicked.emit(hid, point.toPoint(), False)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if name := self.pager.picture_name_at(event.position().toPoint()):
            self.imageOpened.emit(name)
            return
        self.pager.route(event, super().mouseDoubleClickEvent)

    def createMimeDataFromSelection(self) -> QMimeData:
        data = super().createMimeDataFromSelection()
        if self.flow.pictures and data.hasText():  # the pictures' marks stay out of a copy
            start = self.textCursor().selectionStart()
            data.setText(selection_text(self.document(), start, data.text()))
        return data

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self.pager.wheel(event):
            super().wheelEvent(event)

    # painting ----------------------------------------------------------------------------

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if self.pager.paged:
            if not self.busy:  # a move of our own is followed by its own repaint
                self.viewport().update()  # every paint draws the whole screen: nothing to move
            return
        super().scrollContentsBy(dx, dy)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.pager.showing():
            self.pager.paint()
            return
        super().paintEvent(event)
        if self.flow.ruby or self.flow.pictures:
            self.pager.paint_readings_over()

    def cursorRect(self, cursor: QTextCursor | None = None) -> QRect:
        """Where a cursor (the text cursor by default) is drawn, in the column that holds it."""
        cursor = cursor if cursor is not None else self.textCursor()
        return self.pager.place_rect(super().cursorRect(cursor), cursor)

    # where the reader is: the paged screen's, or the scrolled flow's -----------------------

    def top_position(self) -> tuple[int, int]:
        """(stored page, offset) of the first character on screen."""
        if self.pager.showing():
            return self.pager.screen_start()
        return self.flow.top_position()

    def top_page(self) -> int:
        if self.pager.showing():
            return self.pager.screen_start()[0]
        return self.flow.top_page()

    def visible_range(self) -> tuple[int, int]:
        """Document positions of the first and last characters on screen."""
        if self.pager.showing():
            return self.pager.visible_range()
        return self.flow.visible_range()

    def mark_visible(self) -> bool:
        mark = self.flow.mark_range
        if self.pager.showing():
            return mark is not None and self.pager.on_screen(mark[0])
        return self.marks.mark_visible()
