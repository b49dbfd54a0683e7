"""Paged reading over the text view's flow: the screen shows one or two columns, each a slice
of the document ending before the first line that does not fit (``paged.py``), drawn side by
side; turns go from one screen to the next with no line cut, skipped or shown twice.

The document stays one flow of stored pages (``PageFlow``), so positions, marks, highlights
and the selection work as in scrolling. In two columns the document is laid out at the width
of one column; the scroll bar (hidden) sits at the first column's top, and a mouse event in
the second column is handled with the scroll bar moved to that column's top for the moment.

A book whose pages turn right to left (``rtl``: an EPUB's ``page-progression-direction``,
or a right-to-left language) lays its first column on the right, and turns forward with
the left click zone and the Left arrow.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QWheelEvent,
)
from PySide6.QtWidgets import QTextEdit, QWidget

from desktop.reader.paged import TWO_COLUMNS_FROM, Column, line_at, screen_before, screen_from
from desktop.reader.picture_text import paint_pictures
from desktop.reader.ruby_paint import paint_readings
from desktop.reader.text_flow import PageFlow
from desktop.reader.text_marks import Span, TextMarks

PAD = 14  # px above a column's first line and below its last
CLICK_ZONE = 0.15  # the outer part of the screen on each side where a click turns the page
WHEEL_STEP = 120  # one notch of a mouse wheel
TWO_COLUMN_STRETCH = 1.5

Anchor = tuple[int, int]  # (stored page, offset): stable while pages are added and dropped


class PagedFlow(PageFlow):
    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(book_file, fmt, parent)
        self.marks = TextMarks(self)  # marks, highlights and the selection: a part, not a base
        self.paged = False
        self.caret_browsing = False
        self._columns: list[Column] = []
        self._before: dict[Anchor, Anchor] = {}  # a screen's start → the previous one's
        self._after: dict[Anchor, Anchor] = {}  # a screen's start → where it must end
        self._wheel = 0
        self._press: tuple[QPointF, bool] | None = None  # where, and a selection was there
        self.turn_most = 2  # stored pages a turn may move and still be reading on
        self.rtl = False  # pages turn right to left: the first column is on the right

    # geometry ----------------------------------------------------------------------------

    def column_count(self) -> int:
        if not self.paged:
            return 1
        chosen = self.typography.columns
        if chosen in (1, 2):
            return chosen
        return 2 if self.viewport().width() >= TWO_COLUMNS_FROM else 1

    def line_measure(self) -> int:
        """Two columns take lines half as long again as the measure (as a book set in two
        columns): a wide window then holds as much as calibre's, and no line is too long."""
        measure = self.typography.measure
        return round(measure * TWO_COLUMN_STRETCH) if self.column_count() == 2 else measure

    def column_width(self) -> int:
        return max(1, self.viewport().width() // self.column_count())

    def column_x(self, index: int) -> int:
        """Where column ``index`` (0: the screen's first) starts in the viewport: from the
        left, or from the right when pages turn right to left."""
        slot = self.column_count() - 1 - index if self.rtl else index
        return max(0, slot) * self.column_width()

    def page_height(self) -> float:
        return max(20.0, self.viewport().height() - 2 * PAD)

    def _apply_geometry(self) -> bool:
        """Wrap at one column's width, room under the text for the last screen's scroll
        bar, and the column's side margins; True when the layout changed."""
        changed = False
        two = self.column_count() == 2
        mode = QTextEdit.LineWrapMode.FixedPixelWidth if two else QTextEdit.LineWrapMode.WidgetWidth
        if self.lineWrapMode() != mode:
            self.setLineWrapMode(mode)
            changed = True
        if two and self.lineWrapColumnOrWidth() != self.column_width():
            self.setLineWrapColumnOrWidth(self.column_width())
            changed = True
        frame = self.document().rootFrame()
        fmt = frame.frameFormat()
        bottom = self.viewport().height() if self.paged else self.document().documentMargin()
        if abs(fmt.bottomMargin() - bottom) >= 1:
            fmt.setBottomMargin(bottom)
            frame.setFrameFormat(fmt)
            changed = True
        changed = self._apply_column() or changed
        if changed:
            self.forget_screens()
        return changed

    def forget_screens(self) -> None:
        """The layout changed: screens remembered for turning back no longer hold."""
        self._before.clear()
        self._after.clear()

    def _offset_of(self, column: Column) -> int:
        """The scroll value that puts ``column`` PAD below the top of the screen."""
        return int(max(0.0, column.top - PAD))

    # screens -----------------------------------------------------------------------------

    def lay_screen(self, position: int, limit: int = -1) -> None:
        """Show the screen that starts with the line holding ``position`` (ending before
        ``limit`` when given)."""
        self._columns = screen_from(
            self.document(), position, self.page_height(), self.column_count(), limit
        )
        if self._columns:
            self.verticalScrollBar().setValue(self._offset_of(self._columns[0]))
        self.viewport().update()

    def _go_screen(self, start: Anchor, limit: Anchor | None = None) -> None:
        """Lay out the screen starting at ``start``, loading pages around it first."""
        busy, self._busy = self._busy, True
        try:
            for _ in range(3):
                loaded = list(self.loaded)
                if start[0] not in self.loaded:
                    self._reset(start[0])
                position = self._pos(*start)
                self.verticalScrollBar().setValue(int(max(0.0, self._y(position) - PAD)))
                self._fill()
                if self.loaded == loaded:
                    break
            position = self._pos(*start)
            end = self._pos(*limit) if limit is not None and limit[0] in self.loaded else -1
            self.lay_screen(position, end)
        finally:
            self._busy = busy

    def screen_start(self) -> Anchor:
        return self.page_offset(self._columns[0].first) if self._columns else (0, 0)

    def screen_pages(self) -> tuple[int, int]:
        """The first and last stored pages on screen."""
        if not self._columns:
            return (0, 0)
        last = max(self._columns[0].first, min(self._columns[-1].end, self._end()) - 1)
        return self.page_offset(self._columns[0].first)[0], self.page_offset(last)[0]

    def at_end(self) -> bool:
        return bool(
            self._columns
            and self._columns[-1].end >= self._end()
            and self.loaded
            and self.loaded[-1] >= self.page_count
        )

    def at_start(self) -> bool:
        if not (self._columns and self.loaded and self.loaded[0] == 1):
            return False
        first = line_at(self.document(), 0)
        return self._columns[0].first <= (first.start if first is not None else 0)

    def next_page_screen(self) -> bool:
        if not self._columns or self.at_end():
            return False
        start = self.screen_start()
        first, last = self.screen_pages()
        following = self.page_offset(min(self._columns[-1].end, self._end()))
        self._before[following] = start
        self._go_screen(following, self._after.get(following))
        self.turn_most = max(2, last - first + 1)
        return True

    def previous_page_screen(self) -> bool:
        if not self._columns or self.at_start():
            return False
        start = self.screen_start()
        earlier = self._before.get(start)
        if earlier is None or earlier[0] not in self.loaded:
            columns = screen_before(
                self.document(), self._columns[0].first, self.page_height(), self.column_count()
            )
            earlier = self.page_offset(columns[0].first)
            self._before.pop(start, None)
        self._after[earlier] = start
        self._go_screen(earlier, start)
        return True

    def end_screen_of(self, position: int) -> None:
        """The screen whose last line ends just before ``position``."""
        columns = screen_before(self.document(), position, self.page_height(), self.column_count())
        start = self.page_offset(columns[0].first)
        self._go_screen(start, self.page_offset(position))

    def cursorRect(self, cursor: QTextCursor | None = None) -> QRect:
        """Where a cursor (the text cursor by default) is drawn in the viewport, in whichever
        column holds it: the selection bar and margin marks place themselves by it."""
        cursor = cursor if cursor is not None else self.textCursor()
        rect = super().cursorRect(cursor)
        if not self.paged or not self._columns:
            return rect
        # the rect is where the hidden bar is now: the first column's top, or another
        # column's top while a mouse event in that column is handled
        value = self.verticalScrollBar().value()
        for i, column in enumerate(self._columns):
            if column.first <= cursor.position() < column.end:
                return rect.translated(self.column_x(i), value - self._offset_of(column))
        return rect

    def on_screen(self, position: int) -> bool:
        return any(c.first <= position < c.end for c in self._columns)

    def paged_visible_range(self) -> tuple[int, int]:
        if not self._columns:
            return (0, 0)
        return self._columns[0].first, max(self._columns[0].first, self._columns[-1].end - 1)

    def top_position(self) -> tuple[int, int]:
        if self.paged and self._columns:
            return self.screen_start()
        return super().top_position()

    def top_page(self) -> int:
        if self.paged and self._columns:
            return self.screen_start()[0]
        return super().top_page()

    def visible_range(self) -> tuple[int, int]:
        if self.paged and self._columns:
            return self.paged_visible_range()
        return super().visible_range()

    def mark_visible(self) -> bool:
        if self.paged and self._columns:
            return self.mark_range is not None and self.on_screen(self.mark_range[0])
        return self.marks.mark_visible()

    # the marks' calls, as every view answers them -----------------------------------------

    def set_spans(self, spans: list[Span]) -> None:
        self.marks.set_spans(spans)

    def mark_span(self, start: int, end: int) -> None:
        self.marks.mark_span(start, end)

    def mark_position(self) -> tuple[int, int] | None:
        return self.mark_range

    def marked_page(self) -> int:
        return self.marks.marked_page()

    def marked(self) -> bool:
        return self.marks.marked()

    def highlight_at(self, position: int) -> int:
        return self.marks.highlight_at(position)

    def selected_text(self) -> str:
        return self.marks.selected_text()

    def selection_anchor(self) -> dict[str, dict[str, int]] | None:
        return self.marks.selection_anchor()

    def selection_page(self) -> int:
        return self.marks.selection_page()

    def find_text(self, text: str) -> bool:
        return self.marks.find_text(text)

    def select_text(self, text: str) -> bool:
        return self.marks.select_text(text)

    # painting ----------------------------------------------------------------------------

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if self.paged:
            if not self._busy:  # a move of our own is followed by its own repaint
                self.viewport().update()  # every paint draws the whole screen: nothing to move
            return
        super().scrollContentsBy(dx, dy)

    def paintEvent(self, event: object) -> None:
        if not self.paged or not self._columns:
            super().paintEvent(event)  # type: ignore[arg-type]
            if self._ruby or self._pictures:  # readings over their base (issue 45, item 2)
                x, y = self.horizontalScrollBar().value(), self.verticalScrollBar().value()
                over = QPainter(self.viewport())
                over.translate(-x, -y)
                area = QRectF(self.viewport().rect()).translated(x, y)
                if self._ruby:
                    paint_readings(over, self.document(), area, self.theme.text)
                if self._pictures:  # pictures out of the text (picture_text)
                    paint_pictures(over, self.document(), area)
                over.end()
            return
        painter = QPainter(self.viewport())
        palette = QPalette(self.palette())
        palette.setColor(QPalette.ColorRole.Text, QColor(self.theme.text))
        selections = self._paint_selections(palette)
        cursor = self.textCursor().position() if self._caret_shown() else -1
        layout = self.document().documentLayout()
        width = self.column_width()
        for i, column in enumerate(self._columns):
            height = min(column.bottom - column.top, self.page_height() + PAD)
            if height <= 0:
                continue
            offset = self._offset_of(column)
            painter.save()
            painter.translate(self.column_x(i), -offset)
            clip = QRectF(0, column.top, width, height)
            painter.setClipRect(clip)
            context = QAbstractTextDocumentLayout.PaintContext()
            context.clip = clip
            context.palette = palette
            context.selections = selections
            context.cursorPosition = cursor
            layout.draw(painter, context)
            if self._ruby:
                paint_readings(painter, self.document(), clip, self.theme.text)
            if self._pictures:
                paint_pictures(painter, self.document(), clip)
            painter.restore()
        painter.end()

    def _caret_shown(self) -> bool:
        return self.caret_browsing and self.hasFocus()

    def _paint_selections(self, palette: QPalette) -> list[QAbstractTextDocumentLayout.Selection]:
        out = []
        for extra in self.extraSelections():
            sel = QAbstractTextDocumentLayout.Selection()
            sel.cursor = extra.cursor
            sel.format = extra.format
            out.append(sel)
        cursor = self.textCursor()
        if cursor.hasSelection():
            sel = QAbstractTextDocumentLayout.Selection()
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(palette.highlight())
            fmt.setForeground(palette.highlightedText())
            sel.format = fmt
            out.append(sel)
        return out

    # mouse -------------------------------------------------------------------------------

    def _column_at(self, point: QPointF) -> tuple[int, Column, QPointF]:
        width = self.column_width()
        slot = int(point.x() // width)
        slot = self.column_count() - 1 - slot if self.rtl else slot
        i = max(0, min(len(self._columns) - 1, slot))
        column = self._columns[i]
        offset = self._offset_of(column)
        top = column.top - offset
        height = max(1.0, min(column.bottom - column.top, self.page_height()) - 1)
        x = max(0.0, min(point.x() - self.column_x(i), width - 1.0))
        y = max(top, min(point.y(), top + height))
        return i, column, QPointF(x, y)

    def cursor_at(self, point: QPoint) -> QTextCursor:
        """The text cursor at a point of the viewport, in whichever column it falls."""
        if not self.paged or not self._columns:
            return self.cursorForPosition(point)
        _, column, local = self._column_at(QPointF(point))
        return self._in_column(column, lambda: self.cursorForPosition(local.toPoint()))

    def document_point(self, point: QPoint) -> QPointF:
        """The document point under a point of the viewport."""
        if not self.paged or not self._columns:
            bars = self.horizontalScrollBar().value(), self.verticalScrollBar().value()
            return QPointF(point) + QPointF(*bars)
        _, column, local = self._column_at(QPointF(point))
        return local + QPointF(0, self._offset_of(column))

    def _in_column(self, column: Column, call: object) -> QTextCursor:
        bar = self.verticalScrollBar()
        keep, busy, screen = bar.value(), self._busy, self._columns
        self._busy = True
        try:
            bar.setValue(self._offset_of(column))
            return call()  # type: ignore[operator]
        finally:
            if self._columns is screen:  # a clicked link may have laid out another screen
                bar.setValue(keep)
            self._busy = busy

    def _route(self, event: QMouseEvent, handler: object) -> None:
        if not self.paged or not self._columns:
            handler(event)  # type: ignore[operator]
            return
        _, column, local = self._column_at(event.position())
        moved = QMouseEvent(
            event.type(),
            local,
            event.globalPosition(),
            event.button(),
            event.buttons(),
            event.modifiers(),
        )
        self._in_column(column, lambda: handler(moved))  # type: ignore[operator]
        event.setAccepted(moved.isAccepted())
        if event.buttons() or event.type() != QMouseEvent.Type.MouseMove:
            # the selection may have changed: Qt's own update names column 1's place
            self.viewport().update()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._press = (event.position(), self.textCursor().hasSelection())
        self._route(event, super().mousePressEvent)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self._route(event, super().mouseMoveEvent)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        self._route(event, super().mouseDoubleClickEvent)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        press, self._press = self._press, None
        link = self.paged and bool(self._columns) and bool(self._anchor_under(event.position()))
        self._route(event, super().mouseReleaseEvent)
        if (
            not self.paged
            or press is None
            or press[1]
            or link
            or self.caret_browsing
            or event.button() != Qt.MouseButton.LeftButton
            or self.textCursor().hasSelection()
            or (event.position() - press[0]).manhattanLength() > 4
        ):
            return
        width = self.viewport().width()
        left, right = (
            (self.next_screen, self.previous_screen)
            if self.rtl
            else (self.previous_screen, self.next_screen)
        )
        if event.position().x() < width * CLICK_ZONE:
            left()
        elif event.position().x() > width * (1 - CLICK_ZONE):
            right()

    def _anchor_under(self, point: QPointF) -> str:
        _, column, local = self._column_at(point)
        found: list[str] = []
        self._in_column(column, lambda: found.append(self.anchorAt(local.toPoint())))
        return found[0] if found else ""

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self.paged or event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            super().wheelEvent(event)
            return
        delta = event.angleDelta().y() or event.pixelDelta().y()
        if self._wheel * delta < 0:
            self._wheel = 0  # the wheel changed direction
        self._wheel += delta
        while self._wheel <= -WHEEL_STEP:
            self._wheel += WHEEL_STEP
            self.next_screen()
        while self._wheel >= WHEEL_STEP:
            self._wheel -= WHEEL_STEP
            self.previous_screen()
        event.accept()

    # the text view turns screens (scrolling or paged)
    def next_screen(self) -> bool:  # pragma: no cover - TextView defines it
        raise NotImplementedError

    def previous_screen(self) -> bool:  # pragma: no cover - TextView defines it
        raise NotImplementedError
