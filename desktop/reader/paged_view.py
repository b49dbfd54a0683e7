"""Paged reading over the text view's flow: the screen shows one or two columns, each a slice
of the document ending before the first line that does not fit (``paged.py``), drawn side by
side; turns go from one screen to the next with no line cut, skipped or shown twice.

``Pager`` is a part the text view owns (``view.pager``), beside its flow and marks. The
document stays one flow of stored pages (``text_flow.PageFlow``), so positions, marks, highlights
and the selection work as in scrolling. In two columns the document is laid out at the width
of one column; the scroll bar (hidden) sits at the first column's top, and a mouse event in
the second column is handled with the scroll bar moved to that column's top for the moment.

A book whose pages turn right to left (``rtl``: an EPUB's ``page-progression-direction``,
or a right-to-left language) lays its first column on the right, and turns forward with
the left click zone and the Left arrow.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

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
from PySide6.QtWidgets import QTextEdit

from desktop.reader.paged import TWO_COLUMNS_FROM, Column, line_at, screen_before, screen_from
from desktop.reader.picture_text import paint_pictures, picture_at, picture_name
from desktop.reader.ruby_paint import paint_readings
from desktop.reader.typography import side_margin

if TYPE_CHECKING:
    from desktop.reader.text_view import TextView

PAD = 14  # px above a column's first line and below its last
CLICK_ZONE = 0.15  # the outer part of the screen on each side where a click turns the page
WHEEL_STEP = 120  # one notch of a mouse wheel
TWO_COLUMN_STRETCH = 1.5

Anchor = tuple[int, int]  # (stored page, offset): stable while pages are added and dropped


class Pager:
    """The paged screens of one text view (``view.pager``): its columns, the screens
    remembered for turning back, and painting and mouse events in columns."""

    def __init__(self, view: TextView) -> None:
        self.view = view
        self.paged = False
        self.columns: list[Column] = []
        self._before: dict[Anchor, Anchor] = {}  # a screen's start → the previous one's
        self._after: dict[Anchor, Anchor] = {}  # a screen's start → where it must end
        self._wheel = 0
        self.press: tuple[QPointF, bool] | None = None  # where, and a selection was there
        self.turn_most = 2  # stored pages a turn may move and still be reading on
        self.rtl = False  # pages turn right to left: the first column is on the right
        self.side_margin = 28  # left and right margin of the reading column

    def showing(self) -> bool:
        """Paged, with a screen laid out."""
        return self.paged and bool(self.columns)

    # geometry ----------------------------------------------------------------------------

    def column_count(self) -> int:
        if not self.paged:
            return 1
        chosen = self.view.typography.columns
        if chosen in (1, 2):
            return chosen
        return 2 if self.view.viewport().width() >= TWO_COLUMNS_FROM else 1

    def line_measure(self) -> int:
        """Two columns take lines half as long again as the measure (as a book set in two
        columns): a wide window then holds as much as calibre's, and no line is too long."""
        measure = self.view.typography.measure
        return round(measure * TWO_COLUMN_STRETCH) if self.column_count() == 2 else measure

    def column_width(self) -> int:
        return max(1, self.view.viewport().width() // self.column_count())

    def column_x(self, index: int) -> int:
        """Where column ``index`` (0: the screen's first) starts in the viewport: from the
        left, or from the right when pages turn right to left."""
        slot = self.column_count() - 1 - index if self.rtl else index
        return max(0, slot) * self.column_width()

    def page_height(self) -> float:
        return max(20.0, self.view.viewport().height() - 2 * PAD)

    def apply_geometry(self) -> bool:
        """Wrap at one column's width, room under the text for the last screen's scroll
        bar, and the column's side margins; True when the layout changed."""
        changed = False
        two = self.column_count() == 2
        mode = QTextEdit.LineWrapMode.FixedPixelWidth if two else QTextEdit.LineWrapMode.WidgetWidth
        if self.view.lineWrapMode() != mode:
            self.view.setLineWrapMode(mode)
            changed = True
        if two and self.view.lineWrapColumnOrWidth() != self.column_width():
            self.view.setLineWrapColumnOrWidth(self.column_width())
            changed = True
        frame = self.view.document().rootFrame()
        fmt = frame.frameFormat()
        bottom = (
            self.view.viewport().height() if self.paged else self.view.document().documentMargin()
        )
        if abs(fmt.bottomMargin() - bottom) >= 1:
            fmt.setBottomMargin(bottom)
            frame.setFrameFormat(fmt)
            changed = True
        changed = self.apply_column() or changed
        if changed:
            self.forget_screens()
        return changed

    def apply_column(self) -> bool:
        """Centre a column of the chosen measure with the root frame's side margins; True
        when they changed (the document is laid out again)."""
        doc = self.view.document()
        measured = replace(self.view.typography, measure=self.line_measure())
        margin = side_margin(measured, doc.defaultFont(), self.view.pager.column_width())
        self.view.pager.side_margin = margin
        frame = doc.rootFrame()
        fmt = frame.frameFormat()
        if abs(fmt.leftMargin() - margin) < 1 and abs(fmt.rightMargin() - margin) < 1:
            return False
        fmt.setLeftMargin(margin)
        fmt.setRightMargin(margin)
        frame.setFrameFormat(fmt)
        return True

    def forget_screens(self) -> None:
        """The layout changed: screens remembered for turning back no longer hold."""
        self._before.clear()
        self._after.clear()

    def offset_of(self, column: Column) -> int:
        """The scroll value that puts ``column`` PAD below the top of the screen."""
        return int(max(0.0, column.top - PAD))

    # screens -----------------------------------------------------------------------------

    def lay_screen(self, position: int, limit: int = -1) -> None:
        """Show the screen that starts with the line holding ``position`` (ending before
        ``limit`` when given)."""
        self.columns = screen_from(
            self.view.document(), position, self.page_height(), self.column_count(), limit
        )
        if self.columns:
            self.view.verticalScrollBar().setValue(self.offset_of(self.columns[0]))
        self.view.viewport().update()

    def go_screen(self, start: Anchor, limit: Anchor | None = None) -> None:
        """Lay out the screen starting at ``start``, loading pages around it first."""
        busy, self.view.busy = self.view.busy, True
        try:
            for _ in range(3):
                loaded = list(self.view.flow.loaded)
                if start[0] not in self.view.flow.loaded:
                    self.view.flow.reset(start[0])
                position = self.view.flow.pos(*start)
                self.view.verticalScrollBar().setValue(
                    int(max(0.0, self.view.flow.y_of(position) - PAD))
                )
                self.view.flow.fill()
                if self.view.flow.loaded == loaded:
                    break
            position = self.view.flow.pos(*start)
            end = (
                self.view.flow.pos(*limit)
                if limit is not None and limit[0] in self.view.flow.loaded
                else -1
            )
            self.lay_screen(position, end)
        finally:
            self.view.busy = busy

    def screen_start(self) -> Anchor:
        return self.view.flow.page_offset(self.columns[0].first) if self.columns else (0, 0)

    def screen_pages(self) -> tuple[int, int]:
        """The first and last stored pages on screen."""
        if not self.columns:
            return (0, 0)
        last = max(
            self.columns[0].first, min(self.columns[-1].end, self.view.flow.end_position()) - 1
        )
        return self.view.flow.page_offset(self.columns[0].first)[0], self.view.flow.page_offset(
            last
        )[0]

    def at_end(self) -> bool:
        return bool(
            self.columns
            and self.columns[-1].end >= self.view.flow.end_position()
            and self.view.flow.loaded
            and self.view.flow.loaded[-1] >= self.view.flow.page_count
        )

    def at_start(self) -> bool:
        if not (self.columns and self.view.flow.loaded and self.view.flow.loaded[0] == 1):
            return False
        first = line_at(self.view.document(), 0)
        return self.columns[0].first <= (first.start if first is not None else 0)

    def next_page_screen(self) -> bool:
        if not self.columns or self.at_end():
            return False
        start = self.screen_start()
        first, last = self.screen_pages()
        following = self.view.flow.page_offset(
            min(self.columns[-1].end, self.view.flow.end_position())
        )
        self._before[following] = start
        self.go_screen(following, self._after.get(following))
        self.turn_most = max(2, last - first + 1)
        return True

    def previous_page_screen(self) -> bool:
        if not self.columns or self.at_start():
            return False
        start = self.screen_start()
        earlier = self._before.get(start)
        if earlier is None or earlier[0] not in self.view.flow.loaded:
            columns = screen_before(
                self.view.document(), self.columns[0].first, self.page_height(), self.column_count()
            )
            earlier = self.view.flow.page_offset(columns[0].first)
            self._before.pop(start, None)
        self._after[earlier] = start
        self.go_screen(earlier, start)
        return True

    def end_screen_of(self, position: int) -> None:
        """The screen whose last line ends just before ``position``."""
        columns = screen_before(
            self.view.document(), position, self.page_height(), self.column_count()
        )
        start = self.view.flow.page_offset(columns[0].first)
        self.go_screen(start, self.view.flow.page_offset(position))

    def place_rect(self, rect: QRect, cursor: QTextCursor) -> QRect:
        """Qt's rect for ``cursor`` (as if in one column) moved to the column that holds it:
        the selection bar and margin marks place themselves by it."""
        if not self.paged or not self.columns:
            return rect
        # the rect is where the hidden bar is now: the first column's top, or another
        # column's top while a mouse event in that column is handled
        value = self.view.verticalScrollBar().value()
        for i, column in enumerate(self.columns):
            if column.first <= cursor.position() < column.end:
                return rect.translated(self.column_x(i), value - self.offset_of(column))
        return rect

    def on_screen(self, position: int) -> bool:
        return any(c.first <= position < c.end for c in self.columns)

    def visible_range(self) -> tuple[int, int]:
        if not self.columns:
            return (0, 0)
        return self.columns[0].first, max(self.columns[0].first, self.columns[-1].end - 1)

    # painting ----------------------------------------------------------------------------

    def paint_readings_over(self) -> None:
        """Scrolling: ruby readings over their base (issue 45, item 2) and the pictures taken
        out of the text (picture_text), after Qt's paint."""
        view = self.view
        x, y = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
        over = QPainter(view.viewport())
        over.translate(-x, -y)
        area = QRectF(view.viewport().rect()).translated(x, y)
        if view.flow.ruby:
            paint_readings(over, view.document(), area, view.theme.text)
        if view.flow.pictures:
            paint_pictures(over, view.document(), area)
        over.end()

    def paint(self) -> None:
        """The paged screen: each column drawn side by side, the selection and caret in it."""
        painter = QPainter(self.view.viewport())
        palette = QPalette(self.view.palette())
        palette.setColor(QPalette.ColorRole.Text, QColor(self.view.theme.text))
        selections = self._paint_selections(palette)
        cursor = self.view.textCursor().position() if self._caret_shown() else -1
        layout = self.view.document().documentLayout()
        width = self.column_width()
        for i, column in enumerate(self.columns):
            height = min(column.bottom - column.top, self.page_height() + PAD)
            if height <= 0:
                continue
            offset = self.offset_of(column)
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
            if self.view.flow.ruby:
                paint_readings(painter, self.view.document(), clip, self.view.theme.text)
            if self.view.flow.pictures:  # pictures out of the text (picture_text)
                paint_pictures(painter, self.view.document(), clip)
            painter.restore()
        painter.end()

    def _caret_shown(self) -> bool:
        return self.view.caret_browsing and self.view.hasFocus()

    def _paint_selections(self, palette: QPalette) -> list[QAbstractTextDocumentLayout.Selection]:
        out = []
        for extra in self.view.extraSelections():
            sel = QAbstractTextDocumentLayout.Selection()
            sel.cursor = extra.cursor
            sel.format = extra.format
            out.append(sel)
        cursor = self.view.textCursor()
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

    def column_at(self, point: QPointF) -> tuple[int, Column, QPointF]:
        width = self.column_width()
        slot = int(point.x() // width)
        slot = self.column_count() - 1 - slot if self.rtl else slot
        i = max(0, min(len(self.columns) - 1, slot))
        column = self.columns[i]
        offset = self.offset_of(column)
        top = column.top - offset
        height = max(1.0, min(column.bottom - column.top, self.page_height()) - 1)
        x = max(0.0, min(point.x() - self.column_x(i), width - 1.0))
        y = max(top, min(point.y(), top + height))
        return i, column, QPointF(x, y)

    def cursor_at(self, point: QPoint) -> QTextCursor:
        """The text cursor at a point of the viewport, in whichever column it falls."""
        if not self.showing():
            return self.view.cursorForPosition(point)
        _, column, local = self.column_at(QPointF(point))
        return self.in_column(column, lambda: self.view.cursorForPosition(local.toPoint()))

    def document_point(self, point: QPoint) -> QPointF:
        """The document point under a point of the viewport."""
        if not self.showing():
            view = self.view
            bars = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
            return QPointF(point) + QPointF(*bars)
        _, column, local = self.column_at(QPointF(point))
        return local + QPointF(0, self.offset_of(column))

    def picture_name_at(self, point: QPoint) -> str:
        """The picture under a point of the viewport ("" for none): in the text, or drawn over
        a line of its own (picture_text)."""
        name = picture_name(self.cursor_at(point).charFormat())
        if not name and self.view.flow.pictures:
            name = picture_at(self.view.document(), self.document_point(point))
        return name

    def in_column(self, column: Column, call: object) -> QTextCursor:
        bar = self.view.verticalScrollBar()
        keep, busy, screen = bar.value(), self.view.busy, self.columns
        self.view.busy = True
        try:
            bar.setValue(self.offset_of(column))
            return call()  # type: ignore[operator]
        finally:
            if self.columns is screen:  # a clicked link may have laid out another screen
                bar.setValue(keep)
            self.view.busy = busy

    def route(self, event: QMouseEvent, handler: object) -> None:
        if not self.paged or not self.columns:
            handler(event)  # type: ignore[operator]
            return
        _, column, local = self.column_at(event.position())
        moved = QMouseEvent(
            event.type(),
            local,
            event.globalPosition(),
            event.button(),
            event.buttons(),
            event.modifiers(),
        )
        self.in_column(column, lambda: handler(moved))  # type: ignore[operator]
        event.setAccepted(moved.isAccepted())
        if event.buttons() or event.type() != QMouseEvent.Type.MouseMove:
            # the selection may have changed: Qt's own update names column 1's place
            self.view.viewport().update()

    def turn_by_click(
        self, event: QMouseEvent, press: tuple[QPointF, bool] | None, link: bool
    ) -> None:
        """A click (no drag, no selection, no link) in the outer part of a paged screen
        turns it."""
        if (
            not self.paged
            or press is None
            or press[1]
            or link
            or self.view.caret_browsing
            or event.button() != Qt.MouseButton.LeftButton
            or self.view.textCursor().hasSelection()
            or (event.position() - press[0]).manhattanLength() > 4
        ):
            return
        width = self.view.viewport().width()
        left, right = (
            (self.view.next_screen, self.view.previous_screen)
            if self.rtl
            else (self.view.previous_screen, self.view.next_screen)
        )
        if event.position().x() < width * CLICK_ZONE:
            left()
        elif event.position().x() > width * (1 - CLICK_ZONE):
            right()

    def link_under(self, point: QPointF) -> bool:
        """A link under ``point`` of a paged screen (a click there follows it, not a turn)."""
        return self.showing() and bool(self._anchor_under(point))

    def _anchor_under(self, point: QPointF) -> str:
        _, column, local = self.column_at(point)
        found: list[str] = []
        self.in_column(column, lambda: found.append(self.view.anchorAt(local.toPoint())))
        return found[0] if found else ""

    def wheel(self, event: QWheelEvent) -> bool:
        """A paged screen turns by the wheel's notches; False leaves the wheel to Qt."""
        if not self.paged or event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        delta = event.angleDelta().y() or event.pixelDelta().y()
        if self._wheel * delta < 0:
            self._wheel = 0  # the wheel changed direction
        self._wheel += delta
        while self._wheel <= -WHEEL_STEP:
            self._wheel += WHEEL_STEP
            self.view.next_screen()
        while self._wheel >= WHEEL_STEP:
            self._wheel -= WHEEL_STEP
            self.view.previous_screen()
        event.accept()
        return True
