"""The canvas of the PDF view: the tall widget inside its scroll area that paints the rendered
pages, their highlights, the selection and a citation's mark, and turns mouse drags into a
text selection on one page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QWidget

from desktop.highlights.look import PDF_INK, paint_highlight
from desktop.theme import MARK_RGBA, SELECTION_RGBA

if TYPE_CHECKING:
    from desktop.reader.pdf_view import PdfView

GAP = 12


class _Pages(QWidget):
    """The tall canvas inside the scroll area; page ``i`` occupies ``rects[i]``."""

    selectionFinished = Signal(int, str, object)  # page (1-based), text, rects in points
    selectionCleared = Signal()

    def __init__(self, view: PdfView) -> None:
        super().__init__()
        self.view = view
        self.setMouseTracking(False)
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self._press: tuple[int, QPointF] | None = None
        self.selection_page = -1
        self.selection_polys: list[QPolygonF] = []

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(event.rect(), QColor("#808080"))
        view = self.view
        for index, rect in enumerate(view.rects):
            if not rect.intersects(QRectF(event.rect())):
                continue
            image = view.image_for(index)
            painter.fillRect(rect, QColor("white"))  # pages render with a transparent background
            if image is not None:
                painter.drawImage(rect, image)
            scale = view.scale
            for colour, style, polys in view.highlights.get(index + 1, []):
                for poly in polys:
                    paint_highlight(painter, self._to_widget(poly, rect, scale), colour, style)
            if index == self.selection_page:
                painter.setBrush(QColor(*SELECTION_RGBA))
                painter.setPen(Qt.PenStyle.NoPen)
                for poly in self.selection_polys:
                    painter.drawPolygon(self._to_widget(poly, rect, scale))
            if view.mark is not None and view.mark[0] == index:
                painter.setBrush(QColor(*MARK_RGBA))
                painter.setPen(Qt.PenStyle.NoPen)
                for poly in view.mark[1]:
                    painter.drawPolygon(self._to_widget(poly, rect, scale))
            if view.word is not None and view.word[0] == index:  # the word read aloud
                painter.setPen(QPen(QColor(PDF_INK), max(1.5, 1.5 * scale)))
                for poly in view.word[1]:
                    box = self._to_widget(poly, rect, scale).boundingRect()
                    painter.drawLine(box.bottomLeft(), box.bottomRight())
        painter.end()
        view.painted()

    @staticmethod
    def _to_widget(poly: QPolygonF, rect: QRectF, scale: float) -> QPolygonF:
        return QPolygonF(
            [
                QPointF(rect.left() + poly.at(i).x() * scale, rect.top() + poly.at(i).y() * scale)
                for i in range(poly.size())
            ]
        )

    def _hit(self, pos: QPointF) -> tuple[int, QPointF] | None:
        for index, rect in enumerate(self.view.rects):
            if rect.top() - GAP / 2 <= pos.y() <= rect.bottom() + GAP / 2:
                x = min(max(pos.x(), rect.left()), rect.right())
                y = min(max(pos.y(), rect.top()), rect.bottom())
                return index, QPointF(
                    (x - rect.left()) / self.view.scale, (y - rect.top()) / self.view.scale
                )
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = self._hit(event.position())
            if self.selection_polys:
                self.selection_polys = []
                self.selection_page = -1
                self.selectionCleared.emit()
                self.update()
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None:
            self._select(event.position(), final=False)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and event.button() == Qt.MouseButton.LeftButton:
            page, start = self._press
            self._select(event.position(), final=True)
            self._press = None
            hit = self._hit(event.position())
            moved = (hit[1] - start).manhattanLength() * self.view.scale if hit else 99.0
            if hit is not None and hit[0] == page and moved <= 4 and not self.selection_polys:
                # a click, not a drag: on a highlight it opens its bar, elsewhere closes it
                hid = self.highlight_at(page + 1, hit[1])
                where = event.position()
                if hid:  # the bar goes under the highlight's last line, not over it
                    where = QPointF(where.x(), self.highlight_bottom(page + 1, hid))
                self.view.highlightClicked.emit(hid, self.mapToGlobal(where.toPoint()), False)
        super().mouseReleaseEvent(event)

    def highlight_at(self, page: int, point: QPointF) -> int:
        """The id of the highlight drawn at ``point`` (in points) of ``page`` (1-based), the
        last drawn (on top) when several are; 0 when none."""
        for hid, polys in reversed(self.view.highlight_areas.get(page, [])):
            if hid and any(p.containsPoint(point, Qt.FillRule.OddEvenFill) for p in polys):
                return hid
        return 0

    def highlight_bottom(self, page: int, hid: int) -> float:
        """The canvas y of the foot of highlight ``hid`` on ``page`` (1-based)."""
        rect, scale = self.view.rects[page - 1], self.view.scale
        polys = [
            p for h, shapes in self.view.highlight_areas.get(page, []) if h == hid for p in shapes
        ]
        return max(self._to_widget(p, rect, scale).boundingRect().bottom() for p in polys)

    def highlight_for_keys(self) -> tuple[int, QPointF]:
        """The highlight Enter opens: the one the selection is in, else the first one on
        screen; (id, a point under it on the canvas), or (0, …) when none."""
        view = self.view
        if self.selection_polys and self.selection_page >= 0:
            pages = [self.selection_page + 1]
            box: QRectF | None = self.selection_polys[0].boundingRect()
            screen = QRectF()
        else:
            top = view.verticalScrollBar().value()
            screen = QRectF(0, top, self.width(), view.viewport().height())
            pages = [i + 1 for i, rect in enumerate(view.rects) if rect.intersects(screen)]
            box = None
        for page in pages:
            rect = view.rects[page - 1]
            for hid, polys in view.highlight_areas.get(page, []):
                for poly in polys:
                    drawn = self._to_widget(poly, rect, view.scale).boundingRect()
                    inside = (
                        screen.contains(drawn)
                        if box is None
                        else poly.boundingRect().intersects(box)
                    )
                    if hid and inside:
                        return hid, QPointF(drawn.center().x(), self.highlight_bottom(page, hid))
        return 0, QPointF()

    def _select(self, pos: QPointF, *, final: bool) -> None:
        assert self._press is not None
        page, start = self._press
        hit = self._hit(pos)
        if hit is None:
            return
        end_page, end = hit
        if end_page != page:  # a selection stays on one page; clamp to its edge
            size = self.view.page_size(page)
            end = QPointF(size.width(), size.height()) if end_page > page else QPointF(0, 0)
        selection = self.view.document.getSelection(page, start, end)
        self.selection_page = page
        self.selection_polys = list(selection.bounds()) if selection.isValid() else []
        self.update()
        text = selection.text().strip() if selection.isValid() else ""
        if final and text:
            self.selectionFinished.emit(
                page + 1, text, [poly_points(p) for p in self.selection_polys]
            )


def poly_points(poly: QPolygonF) -> list[list[float]]:
    return [[round(poly.at(i).x(), 2), round(poly.at(i).y(), 2)] for i in range(poly.size())]


def to_poly(points: list[list[float]]) -> QPolygonF:
    return QPolygonF([QPointF(x, y) for x, y in points])
