"""Reflowable books (EPUB, text, Markdown, HTML) shown as one continuous flow of their stored
pages, so reading never skips text, while page 42 here stays page 42 in search results,
citations and the spoiler bound.

The view keeps a small window of neighbouring stored pages in its document and loads or drops
pages at either end as the reader scrolls (each page is a few kilobytes: appending one lays
out only that page). It knows where each loaded page starts, so it can say which stored page
is at the top of the screen and turn a character offset inside a page into a place on screen.

Nothing is ever fetched from the network and nothing runs: ``loadResource`` serves only
``book:`` images from inside the EPUB and returns nothing for any other URL; links open in the
system browser only when clicked, and only for http(s) and mailto.
"""

from __future__ import annotations

import html as htmllib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QPoint, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QResizeEvent,
    QShowEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QTextEdit, QWidget

from core.books.model import PageContent
from core.errors import MarginError
from desktop.reader.typography import Typography, book_font, side_margin
from desktop.theme import MARK_RGBA, THEMES, Theme, highlight_colour, page_css
from desktop.widgets import history_button

log = logging.getLogger("margin.reader")

KEEP_PAGES = 12  # loaded pages before the far end is dropped
AHEAD_SCREENS = 2.0  # content kept ready below and above the screen


@dataclass(frozen=True)
class Span:
    """A highlight to draw: from (page, offset) to (page, offset), offsets in the page's text
    as this view lays it out; ``text`` is the fallback for old highlights without offsets."""

    page: int
    text: str
    colour: str
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None


class TextView(QTextBrowser):
    linkOpened = Signal(str)
    topPageChanged = Signal(int, bool)  # stored page at the top, True when the reader scrolled
    requestBack = Signal()
    requestForward = Signal()
    imageOpened = Signal(str)  # book: url of an image the reader clicked
    blockedRequests = 0  # remote resources refused (tests read it)

    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Book page")
        self.book_file = book_file
        self.format = fmt
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._link)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.theme: Theme = THEMES["light"]
        self.font_size = 13
        self.typography = Typography()
        self._side_margin = 28  # left and right margin of the reading column
        self.page: PageContent | None = None  # the page at the top of the screen
        self.page_count = 0
        self._loader: Callable[[int], PageContent] | None = None
        self.loaded: list[int] = []  # stored page numbers in the document, in order
        self.starts: list[int] = []  # document position where each loaded page begins
        self._spans: list[Span] = []
        self._mark: tuple[int, int] | None = None  # document positions of the marked words
        self._mark_text = ""
        self._mark_page = 0
        self._busy = False
        self._top = 0
        self._images: dict[str, QSize] = {}
        self._anchor: tuple[int, int] | None = None  # (page, offset) at the top of the screen
        self._mark_pinned = False  # the mark stays centred until the reader scrolls
        self.document().setDocumentMargin(28)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        # Qt lays a document out again (when the view is first shown, or finishes a large
        # layout later) and moves the scroll bar's range under the reader: that is no
        # scrolling, the same words stay at the top
        self.verticalScrollBar().rangeChanged.connect(self._relaid_out)
        self._resize_timer = QTimer(self, singleShot=True, interval=120)
        self._resize_timer.timeout.connect(self._rerender_keep_place)

    # resources and links ---------------------------------------------------------------

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        url = QUrl(url) if isinstance(url, str) else url
        if url.scheme() == "book" and self.book_file is not None and self.format == "epub":
            image = self._image(url)
            return image if image is not None else QByteArray()
        TextView.blockedRequests += 1
        return QByteArray()  # no network, no local files outside the book

    def _image(self, url: QUrl) -> QImage | None:
        from core.books.epub import read_resource

        assert self.book_file is not None
        try:
            data = read_resource(self.book_file, url.path())
        except MarginError as exc:
            log.info("image not shown: %s", exc.message)
            return None
        image = QImage.fromData(data)
        if image.isNull():
            return None
        self._images[url.toString()] = image.size()
        return image

    def _link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            self.linkOpened.emit(url.toString())
            QDesktopServices.openUrl(url)

    # source and rendering ----------------------------------------------------------------

    def set_source(self, loader: Callable[[int], PageContent], page_count: int) -> None:
        """Where stored pages come from (``loader(number)``) and how many there are."""
        self._loader = loader
        self.page_count = page_count

    def set_theme(self, name: str) -> None:
        self.theme = THEMES.get(name, THEMES["light"])
        self.setStyleSheet(
            f"QTextBrowser {{ background: {self.theme.background}; color: {self.theme.text}; }}"
        )
        self._rerender_keep_place()

    def set_font_size(self, size: int) -> None:
        self.font_size = max(8, min(size, 40))
        self._rerender_keep_place()

    def set_typography(self, typography: Typography) -> None:
        """Font, spacing, measure and justification; the reader keeps its place."""
        self.typography = typography
        self.font_size = max(8, min(typography.font_size, 40))
        self._rerender_keep_place()

    def _apply_column(self) -> bool:
        """Centre a column of the chosen measure with the root frame's side margins; True
        when they changed (the document is laid out again)."""
        doc = self.document()
        margin = side_margin(self.typography, doc.defaultFont(), self.viewport().width())
        self._side_margin = margin
        frame = doc.rootFrame()
        fmt = frame.frameFormat()
        if abs(fmt.leftMargin() - margin) < 1 and abs(fmt.rightMargin() - margin) < 1:
            return False
        fmt.setLeftMargin(margin)
        fmt.setRightMargin(margin)
        frame.setFrameFormat(fmt)
        return True

    def set_spans(self, spans: list[Span]) -> None:
        self._spans = spans
        self._decorate()

    def show_page(
        self, page: PageContent, highlights: list[tuple[str, str]] | None = None, mark: str = ""
    ) -> None:
        """Show one page on its own (no loader): kept for simple callers."""
        if self._loader is None:
            self._loader = lambda n: page
            self.page_count = max(self.page_count, page.number)
        if highlights is not None:
            self._spans = [Span(page.number, t, c) for t, c in highlights]
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
        self._busy = True
        try:
            self._reset(page)
            self._mark = None
            self._mark_text = mark
            found = False
            if mark:
                found = self._place_mark(page, mark, nth, near)
            if not found:
                self._scroll_to_position(self._pos(page, offset))
            self._fill()
            self._decorate()
            self._mark_pinned = found
            # the place asked for, not what the top line shows now: a view not yet at its
            # final size (or shown) lays it out again later, and must keep this place
            self._anchor = (
                self.top_position() if found else self.page_offset(self._pos(page, offset))
            )
        finally:
            self._busy = False
        self._update_top(user=False)
        return found

    def _reset(self, page: int) -> None:
        doc = self.document()
        # an image's line must not get the text's 140% line height (a gap under each picture)
        doc.setDefaultStyleSheet(
            page_css(self.theme, self.font_size, self.typography)
            + " p.image { line-height: 100%; text-indent: 0; }"
        )
        typography = replace(self.typography, font_size=self.font_size)
        doc.setDefaultFont(book_font(typography, doc.defaultFont()))
        option = doc.defaultTextOption()
        option.setAlignment(
            Qt.AlignmentFlag.AlignJustify if typography.justify else Qt.AlignmentFlag.AlignLeft
        )
        doc.setDefaultTextOption(option)
        doc.clear()
        self._apply_column()
        self.loaded = []
        self.starts = []
        first = max(1, page - 1)
        for number in range(first, min(self.page_count, page + 1) + 1):
            self._append(number)

    def _page_html(self, number: int) -> str:
        assert self._loader is not None
        content = self._loader(number)
        body = content.html
        if not body:
            body = "".join(
                f"<p>{htmllib.escape(p)}</p>" for p in content.text.split("\n\n") if p.strip()
            )
        if "<img" in body or "<IMG" in body:
            body = self._fit_images(body)
        return body or "<p></p>"

    def _fit_images(self, body: str) -> str:
        """Give every image the column's width at most (height follows, keeping the shape)."""
        column = max(50, self.viewport().width() - 2 * self._side_margin - 8)

        def size(match: re.Match[str]) -> str:
            tag = match.group(0)
            src = re.search(r'src="([^"]+)"', tag)
            if src is None or "width=" in tag:
                return tag
            url = QUrl(htmllib.unescape(src.group(1)))
            natural = self._images.get(url.toString())
            if natural is None and url.scheme() == "book" and self.book_file is not None:
                self._image(url)
                natural = self._images.get(url.toString())
            if natural is None or natural.width() <= column:
                return tag
            return tag.replace("<img", f'<img width="{column}"', 1)

        return re.sub(r"<img\b[^>]*>", size, body, flags=re.IGNORECASE)

    def _append(self, number: int) -> None:
        doc = self.document()
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if self.loaded:
            cursor.insertBlock()
        self.starts.append(cursor.position())
        self.loaded.append(number)
        cursor.insertHtml(self._page_html(number))

    def _prepend(self, number: int) -> int:
        """Insert page ``number`` before the first loaded one; returns the height added."""
        doc = self.document()
        layout = doc.documentLayout()
        before = layout.blockBoundingRect(doc.findBlock(self.starts[0])).top()
        length_before = doc.characterCount()
        cursor = QTextCursor(doc)
        cursor.insertBlock()
        cursor.setPosition(0)
        cursor.insertHtml(self._page_html(number))
        added = doc.characterCount() - length_before
        self.starts = [0] + [s + added for s in self.starts]
        self.loaded.insert(0, number)
        if self._mark is not None:
            self._mark = (self._mark[0] + added, self._mark[1] + added)
        after = layout.blockBoundingRect(doc.findBlock(self.starts[1])).top()
        return int(after - before)

    def _drop_first(self) -> int:
        doc = self.document()
        layout = doc.documentLayout()
        before = layout.blockBoundingRect(doc.findBlock(self.starts[1])).top()
        cursor = QTextCursor(doc)
        cursor.setPosition(self.starts[1], QTextCursor.MoveMode.KeepAnchor)
        removed = self.starts[1]
        cursor.removeSelectedText()
        self.loaded.pop(0)
        self.starts = [s - removed for s in self.starts[1:]]
        if self._mark is not None:
            self._mark = (self._mark[0] - removed, self._mark[1] - removed)
            if self._mark[0] < 0:
                self._mark = None
        after = layout.blockBoundingRect(doc.findBlock(0)).top()
        return int(before - after)

    def _drop_last(self) -> None:
        doc = self.document()
        cursor = QTextCursor(doc)
        cursor.setPosition(self.starts[-1] - 1)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self.loaded.pop()
        if self._mark is not None and self._mark[1] > self.starts[-1]:
            self._mark = None
        self.starts.pop()

    def _y(self, position: int) -> float:
        doc = self.document()
        block = doc.findBlock(position)
        rect = doc.documentLayout().blockBoundingRect(block)
        layout = block.layout()
        line = layout.lineForTextPosition(position - block.position()) if layout else None
        if line is not None and line.isValid():
            return float(rect.top() + line.y())
        return float(rect.top())

    def _fill(self) -> None:
        """Keep a couple of screens of text ready on both sides of the screen."""
        bar = self.verticalScrollBar()
        screen = max(1, self.viewport().height())
        doc = self.document()
        guard = 0
        while self.loaded and guard < 40:
            guard += 1
            height = doc.documentLayout().documentSize().height()
            value = bar.value()
            if height - (value + screen) < AHEAD_SCREENS * screen and (
                self.loaded[-1] < self.page_count
            ):
                self._append(self.loaded[-1] + 1)
                continue
            if value < AHEAD_SCREENS * screen and self.loaded[0] > 1:
                added = self._prepend(self.loaded[0] - 1)
                bar.setValue(value + added)
                continue
            break
        while len(self.loaded) > KEEP_PAGES:
            value = bar.value()
            top_index = self._index_at(value)
            if top_index > len(self.loaded) // 2 and (
                self._y(self.starts[1]) < value - AHEAD_SCREENS * screen
            ):
                removed = self._drop_first()
                bar.setValue(value - removed)
            elif len(self.loaded) - top_index > KEEP_PAGES // 2 and (
                self._y(self.starts[-1]) > value + (AHEAD_SCREENS + 1) * screen
            ):
                self._drop_last()
            else:
                break

    def _rerender_keep_place(self) -> None:
        if not self.loaded:
            return
        page, offset = self._anchor or self.top_position()
        pinned = self._mark_pinned
        mark = (
            (self.page_offset(self._mark[0]), self.page_offset(self._mark[1]))
            if self._mark is not None
            else None
        )
        self.show_at(page, offset)
        if mark is not None and mark[0][0] in self.loaded and mark[1][0] in self.loaded:
            self._mark = (self._pos(*mark[0]), self._pos(*mark[1]))
            if pinned:
                self._busy = True
                try:
                    self._scroll_to_position(self._mark[0], centre=True)
                    self._fill()
                finally:
                    self._busy = False
                self._mark_pinned = True
            self._decorate()

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
        self._busy = True  # scrolls caused by the rewrap are not the reader's
        try:
            super().resizeEvent(event)
            if event.oldSize().width() != event.size().width():
                self._apply_column()
            if self._images and event.oldSize().width() != event.size().width():
                self._resize_timer.start()
            # the text has been rewrapped: keep the same words at the top (or the mark centred)
            if self._mark is not None and self._mark_pinned:
                self._scroll_to_position(self._mark[0], centre=True)
            elif self._anchor is not None and self._anchor[0] in self.loaded:
                self._scroll_to_position(self._pos(*self._anchor))
            self._fill()
        finally:
            self._busy = False

    # positions --------------------------------------------------------------------------

    def _index_of(self, position: int) -> int:
        index = 0
        for i, start in enumerate(self.starts):
            if start <= position:
                index = i
            else:
                break
        return index

    def _index_at(self, y: float) -> int:
        """Index of the loaded page shown at document height ``y``."""
        index = 0
        for i, start in enumerate(self.starts):
            if self._y(start) <= y + 1:
                index = i
            else:
                break
        return index

    def _pos(self, page: int, offset: int) -> int:
        """Document position of ``offset`` in stored ``page`` (clamped to that page)."""
        if page not in self.loaded:
            return 0
        i = self.loaded.index(page)
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self._end()
        return max(self.starts[i], min(self.starts[i] + max(0, offset), end))

    def _end(self) -> int:
        return self.document().characterCount() - 1

    def page_offset(self, position: int) -> tuple[int, int]:
        """(stored page, offset in it) of a document position."""
        if not self.loaded:
            return (0, 0)
        i = self._index_of(position)
        return self.loaded[i], position - self.starts[i]

    def top_position(self) -> tuple[int, int]:
        """(stored page, offset) of the first character on screen."""
        cursor = self.cursorForPosition(QPoint(4, 2))
        return self.page_offset(cursor.position())

    def top_page(self) -> int:
        if not self.loaded:
            return 0
        return self.loaded[self._index_at(self.verticalScrollBar().value() + 8)]

    def _scroll_to_position(self, position: int, *, centre: bool = False) -> None:
        bar = self.verticalScrollBar()
        y = self._y(position)
        if centre:
            y -= self.viewport().height() / 2 - 20
        elif position <= self.starts[self._index_of(position)]:
            y -= 4
        bar.setValue(int(max(0, y)))

    def _scrolled(self, value: int) -> None:
        if self._busy or not self.loaded:
            return
        self._busy = True
        try:
            self._fill()
            self._anchor = self.top_position()
            self._mark_pinned = False
        finally:
            self._busy = False
        self._update_top(user=True)

    def _relaid_out(self, *_: int) -> None:
        if self._busy or not self.loaded:
            return
        self._busy = True
        try:
            if self._mark is not None and self._mark_pinned:
                self._scroll_to_position(self._mark[0], centre=True)
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
        bar = self.verticalScrollBar()
        bar.setValue(
            int(max(0, self._y(end) + self.line_height() * 1.5 - self.viewport().height()))
        )

    def chapter_bounds(self) -> tuple[int, int]:
        return (self.loaded[0], self.loaded[-1]) if self.loaded else (0, 0)

    # screens ---------------------------------------------------------------------------

    def line_height(self) -> int:
        return int(
            self.fontMetrics().lineSpacing() * self.font_size / max(1, self.font().pointSize())
        )

    def next_screen(self) -> bool:
        """Move one screen on, keeping the last line in view; False at the end of the book."""
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.line_height() * 1.6))
        if bar.value() >= bar.maximum():
            return False
        bar.setValue(bar.value() + step)
        return True

    def previous_screen(self) -> bool:
        bar = self.verticalScrollBar()
        step = max(20, self.viewport().height() - int(self.line_height() * 1.6))
        if bar.value() <= 0:
            return False
        bar.setValue(bar.value() - step)
        return True

    def visible_range(self) -> tuple[int, int]:
        """Document positions of the first and last characters on screen."""
        first = self.cursorForPosition(QPoint(0, 0)).position()
        rect = self.viewport().rect()
        last = self.cursorForPosition(QPoint(rect.width() - 1, rect.height() - 1)).position()
        return first, last

    # keys and mouse ---------------------------------------------------------------------

    _SCREEN_KEYS = {
        Qt.Key.Key_PageDown,
        Qt.Key.Key_PageUp,
        Qt.Key.Key_Space,
        Qt.Key.Key_Right,
        Qt.Key.Key_Left,
        Qt.Key.Key_Down,
        Qt.Key.Key_Up,
        Qt.Key.Key_Home,
        Qt.Key.Key_End,
    }
    chapterEdge = Signal(bool)  # True: go to the chapter's end, False: its start

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if event.key() in self._SCREEN_KEYS and mods in (
                Qt.KeyboardModifier.NoModifier,
                Qt.KeyboardModifier.ShiftModifier,
            ):
                event.accept()  # the view turns screens before the window's page actions
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        shift = mods == Qt.KeyboardModifier.ShiftModifier
        plain = mods == Qt.KeyboardModifier.NoModifier
        forward = (Qt.Key.Key_PageDown, Qt.Key.Key_Right, Qt.Key.Key_Down)
        backward = (Qt.Key.Key_PageUp, Qt.Key.Key_Left, Qt.Key.Key_Up)
        if (plain and (key in forward or key == Qt.Key.Key_Space)) or (
            shift and key == Qt.Key.Key_PageDown
        ):
            self.next_screen()
            return
        if (plain and key in backward) or (shift and key in (Qt.Key.Key_Space,)):
            self.previous_screen()
            return
        if plain and key in (Qt.Key.Key_Home, Qt.Key.Key_End):
            self.chapterEdge.emit(key == Qt.Key.Key_End)
            return
        if mods & Qt.KeyboardModifier.ShiftModifier and key in (
            Qt.Key.Key_Left,
            Qt.Key.Key_Right,
            Qt.Key.Key_Up,
            Qt.Key.Key_Down,
            Qt.Key.Key_Home,
            Qt.Key.Key_End,
        ):
            self._caret_into_view()
        super().keyPressEvent(event)

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

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        fmt = self.cursorForPosition(event.position().toPoint()).charFormat()
        if fmt.isImageFormat():
            self.imageOpened.emit(fmt.toImageFormat().name())
            return
        super().mouseDoubleClickEvent(event)

    # marks and highlights ----------------------------------------------------------------

    def _find_from(self, text: str, position: int) -> QTextCursor | None:
        words = " ".join(text.split())
        doc = self.document()
        for candidate in (words, words[:120], " ".join(words.split()[:8])):
            if not candidate:
                continue
            cursor = doc.find(candidate, position)
            if not cursor.isNull():
                return cursor
        # a quote that runs over a paragraph break (the view has a break where the stored
        # text has a space): mark the longest part of it that sits in one paragraph
        parts = words.split()
        for n in range(min(len(parts), 12) - 1, 2, -1):
            for candidate in (" ".join(parts[:n]), " ".join(parts[-n:])):
                cursor = doc.find(candidate, position)
                if not cursor.isNull():
                    return cursor
        return None

    def _place_mark(self, page: int, mark: str, nth: int = 0, near: int = -1) -> bool:
        """Mark ``mark`` where it really is: on ``page`` (its ``nth`` occurrence there, or the
        one closest to offset ``near``), else where it continues on the next page, else on
        the page before; then centre it."""
        if page not in self.loaded:
            return False
        start = self.starts[self.loaded.index(page)]
        cursor = self._find_from(mark, start)
        if near >= 0 and cursor is not None:
            target = self._pos(page, near)
            page_end = self._pos(page, 1 << 30)
            best = cursor
            following: QTextCursor | None = cursor
            while following is not None and following.selectionStart() <= page_end:
                if abs(following.selectionStart() - target) < abs(best.selectionStart() - target):
                    best = following
                following = self._find_from(mark, following.selectionEnd())
            cursor = best
        for _ in range(nth):
            if cursor is None:
                break
            later = self._find_from(mark, cursor.selectionEnd())
            if later is None:
                break
            cursor = later
        i = self.loaded.index(page)
        if cursor is None or (
            i + 2 < len(self.starts) and cursor.selectionStart() >= self.starts[i + 2]
        ):
            if i > 0:
                cursor = self._find_from(mark, self.starts[i - 1])
                if cursor is not None and cursor.selectionStart() >= start:
                    cursor = None
            else:
                cursor = None
        if cursor is None:
            return False
        self._mark = (cursor.selectionStart(), cursor.selectionEnd())
        self._mark_page = self.page_offset(cursor.selectionStart())[0]
        self._scroll_to_position(self._mark[0], centre=True)
        return True

    def mark_position(self) -> tuple[int, int] | None:
        return self._mark

    def marked_page(self) -> int:
        return self._mark_page if self._mark is not None else 0

    def _decorate(self) -> None:
        extras: list[QTextEdit.ExtraSelection] = []
        doc = self.document()
        first, last = (self.loaded[0], self.loaded[-1]) if self.loaded else (0, -1)
        for span in self._spans:
            cursor: QTextCursor | None = None
            if span.start is not None and span.end is not None:
                (p1, o1), (p2, o2) = span.start, span.end
                if p2 < first or p1 > last:
                    continue
                a = self._pos(p1, o1) if p1 >= first else 0
                b = self._pos(p2, o2) if p2 <= last else self._end()
                if b > a:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(a)
                    cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            elif first <= span.page <= last:
                cursor = self._find_from(span.text, self.starts[self.loaded.index(span.page)])
            if cursor is not None:
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                fmt = QTextCharFormat()
                fmt.setBackground(highlight_colour(span.colour))
                sel.format = fmt
                extras.append(sel)
        if self._mark is not None:
            cursor = QTextCursor(doc)
            cursor.setPosition(self._mark[0])
            cursor.setPosition(self._mark[1], QTextCursor.MoveMode.KeepAnchor)
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(*MARK_RGBA))
            sel.format = fmt
            extras.append(sel)
        self.setExtraSelections(extras)

    def marked(self) -> bool:
        return any(
            sel.format.background().color().alpha() == MARK_RGBA[3]
            for sel in self.extraSelections()
        )

    def mark_visible(self) -> bool:
        """True when the whole marked passage (or its first screenful) is on screen."""
        if self._mark is None:
            return False
        top = self.verticalScrollBar().value()
        bottom = top + self.viewport().height()
        y1 = self._y(self._mark[0])
        return top <= y1 and y1 + self.line_height() <= bottom

    # selection ---------------------------------------------------------------------------

    def selected_text(self) -> str:
        return self.textCursor().selectedText().replace("\u2029", "\n").strip()

    def selection_anchor(self) -> dict[str, Any] | None:
        """Where the selection starts and ends, as stored pages and offsets."""
        cursor = self.textCursor()
        if not cursor.hasSelection() or not self.loaded:
            return None
        p1, o1 = self.page_offset(cursor.selectionStart())
        p2, o2 = self.page_offset(cursor.selectionEnd())
        return {"start": {"page": p1, "offset": o1}, "end": {"page": p2, "offset": o2}}

    def selection_page(self) -> int:
        cursor = self.textCursor()
        return self.page_offset(cursor.selectionStart())[0] if cursor.hasSelection() else 0

    def find_text(self, text: str) -> bool:
        return self._find_from(text, 0) is not None

    def document_text(self) -> str:
        return self.document().toPlainText()

    def page_text(self, page: int) -> str:
        """The text of a loaded stored page as laid out here (offsets count in it)."""
        if page not in self.loaded:
            return ""
        i = self.loaded.index(page)
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self._end()
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.starts[i])
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText().replace("\u2029", "\n")

    def select_text(self, text: str) -> bool:
        """Select ``text`` (the first time it appears from the top page on)."""
        start = self.starts[self.loaded.index(self.page.number)] if self.page and self.loaded else 0
        cursor = self.document().find(text, start, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            cursor = self.document().find(text, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            return False
        self.setTextCursor(cursor)
        return True
