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
            self._select(event.position(), final=True)
            self._press = None
        super().mouseReleaseEvent(event)

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
