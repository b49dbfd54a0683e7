"""How the library draws its books: one delegate paints each book (cover or placeholder,
title, author, progress bar) in a grid of tiles or a list of rows, so no book is a widget."""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPalette,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from core.books.cover_names import cover_colour
from core.store.book_info import BookInfo
from desktop.library.covers import CoverStore
from desktop.library.model import BOOK, cover_job, progress_text

MIN_TILE = 96  # narrowest grid cell, so a 230-pixel panel still shows two columns
TEXT_BLOCK = 58  # title (two lines), author and the progress bar under a cover
LIST_ROW = 64
TILE_PAD = 8
ROW_PAD = 6


# the author line under a cover: dimmer than the title, yet ≥ 4.5 : 1 on a selected tile in
# every theme (160 gave 4.05 : 1 in light, 2.98 : 1 in sepia; 220 gives 5.0 : 1 at the least)
CAPTION_ALPHA = 220


class BookDelegate(QStyledItemDelegate):
    """Paints one book: cover (or its placeholder), title, author, a progress bar."""

    def __init__(self, view: LibraryListView, covers: CoverStore) -> None:
        super().__init__(view)
        self.view = view
        self.covers = covers
        # the text under a cover (title, author, bar) drawn once per book, size and theme:
        # painting a tile is then two plain copies, which keeps scrolling under a frame
        self._blocks: OrderedDict[tuple[object, ...], QPixmap] = OrderedDict()

    def _text_origin(self) -> QPoint:
        """Where the text beside or under the cover starts, inside a cell."""
        size = self.view.cover_size()
        if self.view.grid_mode:
            return QPoint(0, TILE_PAD + size.height() + 1)
        return QPoint(ROW_PAD + size.width() + 4, 0)

    def _block(self, rect: QRect, palette: QPalette, book: BookInfo) -> QPixmap:
        key = (
            book.id,
            book.title,
            book.author,
            book.format,
            progress_text(book),
            round(book.progress * 200),
            rect.width(),
            rect.height(),
            self.view.grid_mode,
            palette.color(QPalette.ColorRole.Text).rgba(),
            palette.color(QPalette.ColorRole.Highlight).rgba(),
            self.view.font().key(),
        )
        block = self._blocks.get(key)
        if block is not None:
            self._blocks.move_to_end(key)
            return block
        ratio = self.view.devicePixelRatioF()
        origin = self._text_origin()
        block = QPixmap(
            round((rect.width() - origin.x()) * ratio), round((rect.height() - origin.y()) * ratio)
        )
        block.setDevicePixelRatio(ratio)
        block.fill(Qt.GlobalColor.transparent)
        p = QPainter(block)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        local = QRect(-origin.x(), -origin.y(), rect.width(), rect.height())
        if self.view.grid_mode:
            self._paint_tile(p, local, palette, book)
        else:
            self._paint_row(p, local, palette, book)
        p.end()
        self._blocks[key] = block
        while len(self._blocks) > 1000:
            self._blocks.popitem(last=False)
        return block

    def keep_only(self, book_ids: set[int]) -> None:
        """Let go of the text drawn for every book but these (the shelf is hidden)."""
        for key in [k for k in self._blocks if k[0] not in book_ids]:
            del self._blocks[key]

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        return self.view.cell_size()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        book: BookInfo | None = index.data(BOOK)
        if book is None:
            return
        rect: QRect = option.rect
        state = option.state
        palette: QPalette = option.palette
        selected = bool(state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if selected or state & QStyle.StateFlag.State_MouseOver:
            colour = QColor(palette.color(QPalette.ColorRole.Highlight))
            colour.setAlpha(70 if selected else 28)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(rect).adjusted(2, 2, -2, -2), 6, 6)
        size = self.view.cover_size()
        pad = TILE_PAD if self.view.grid_mode else ROW_PAD
        self._paint_cover(painter, QRect(QPoint(rect.left() + pad, rect.top() + pad), size), book)
        painter.drawPixmap(rect.topLeft() + self._text_origin(), self._block(rect, palette, book))
        if state & QStyle.StateFlag.State_HasFocus and self.view.hasFocus():
            pen = QColor(palette.color(QPalette.ColorRole.Highlight))
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(rect).adjusted(2.5, 2.5, -2.5, -2.5), 6, 6)
        painter.restore()

    def _paint_cover(self, painter: QPainter, target: QRect, book: BookInfo) -> None:
        pixmap = self.covers.pixmap(cover_job(book))
        if pixmap is None:  # a placeholder in the book's own colour until the cover arrives
            painter.fillRect(target, QColor(*cover_colour(book.title)))
        elif pixmap.deviceIndependentSize().toSize() == target.size():
            painter.drawPixmap(target.topLeft(), pixmap)  # a plain copy: made at this size
        else:  # the previous size, until the new one comes
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawPixmap(target, pixmap)

    def _paint_bar(self, painter: QPainter, bar: QRectF, palette: QPalette, book: BookInfo) -> None:
        track = QColor(palette.color(QPalette.ColorRole.WindowText))
        track.setAlpha(45)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        painter.drawRoundedRect(bar, bar.height() / 2, bar.height() / 2)
        if book.progress > 0:
            done = QRectF(bar)
            done.setWidth(max(bar.height(), bar.width() * book.progress))
            painter.setBrush(palette.color(QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(done, bar.height() / 2, bar.height() / 2)

    def _paint_tile(
        self, painter: QPainter, rect: QRect, palette: QPalette, book: BookInfo
    ) -> None:
        """The text under a cover (into the block pixmap)."""
        pad = TILE_PAD
        size = self.view.cover_size()
        cover_w = size.width()
        cover = QRect(QPoint(rect.left() + pad, rect.top() + pad), size)
        fm = self.view.fontMetrics()
        text = palette.color(QPalette.ColorRole.Text)
        y = cover.bottom() + 5
        title_rect = QRect(cover.left(), y, cover_w, fm.height() * 2)
        painter.setPen(text)
        bold = QFont(self.view.font())
        bold.setBold(True)
        painter.setFont(bold)
        title = _elide_lines(book.title, QFontMetrics(bold), cover_w, 2)
        painter.drawText(
            title_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), title
        )
        painter.setFont(self.view.font())
        lines = title.count("\n") + 1
        y += fm.height() * lines
        dim = QColor(text)
        dim.setAlpha(CAPTION_ALPHA)
        painter.setPen(dim)
        author = fm.elidedText(
            book.author or "Unknown author", Qt.TextElideMode.ElideRight, cover_w
        )
        painter.drawText(
            QRect(cover.left(), y, cover_w, fm.height()), int(Qt.AlignmentFlag.AlignLeft), author
        )
        bar_y = rect.bottom() - pad - 3
        label = progress_text(book)
        label_w = fm.horizontalAdvance(label) + 6
        self._paint_bar(painter, QRectF(cover.left(), bar_y, cover_w - label_w, 4), palette, book)
        painter.setPen(dim)
        painter.drawText(
            QRect(cover.right() - label_w, bar_y - fm.height() // 2 + 2, label_w + 1, fm.height()),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            label,
        )

    def _paint_row(self, painter: QPainter, rect: QRect, palette: QPalette, book: BookInfo) -> None:
        pad = ROW_PAD
        cover = QRect(QPoint(rect.left() + pad, rect.top() + pad), self.view.cover_size())
        fm = self.view.fontMetrics()
        x = cover.right() + 10
        width = rect.right() - pad - x
        text = palette.color(QPalette.ColorRole.Text)
        bold = QFont(self.view.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(
            QRect(x, cover.top(), width, fm.height()),
            int(Qt.AlignmentFlag.AlignLeft),
            QFontMetrics(bold).elidedText(book.title, Qt.TextElideMode.ElideRight, width),
        )
        painter.setFont(self.view.font())
        dim = QColor(text)
        dim.setAlpha(CAPTION_ALPHA)
        painter.setPen(dim)
        detail = f"{book.author or 'Unknown author'} · {book.format.upper()}"
        painter.drawText(
            QRect(x, cover.top() + fm.height() + 2, width, fm.height()),
            int(Qt.AlignmentFlag.AlignLeft),
            fm.elidedText(detail, Qt.TextElideMode.ElideRight, width),
        )
        label = progress_text(book)
        label_w = fm.horizontalAdvance(label) + 6
        bar_y = cover.bottom() - 6
        self._paint_bar(painter, QRectF(x, bar_y, max(10, width - label_w), 4), palette, book)
        painter.setPen(dim)
        painter.drawText(
            QRect(rect.right() - pad - label_w, bar_y - fm.height() // 2 + 2, label_w, fm.height()),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            label,
        )


def _elide_lines(text: str, fm: QFontMetrics, width: int, lines: int) -> str:
    """Word-wrap ``text`` into at most ``lines`` lines, eliding the last one."""
    words = text.split()
    out: list[str] = []
    current = ""
    for i, word in enumerate(words):
        trial = f"{current} {word}".strip()
        if fm.horizontalAdvance(trial) <= width or not current:
            current = trial
            continue
        out.append(current)
        current = word
        if len(out) == lines - 1:
            current = " ".join(words[i:])
            break
    out.append(current)
    out = [fm.elidedText(line, Qt.TextElideMode.ElideRight, width) for line in out[:lines]]
    return "\n".join(out)


class LibraryListView(QListView):
    """The books; Enter opens, Delete asks to remove."""

    requestOpenRow = Signal(QModelIndex)
    requestRemoveRow = Signal(QModelIndex)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid_mode = True
        self.covers: CoverStore | None = None
        self._cell = QSize(MIN_TILE, MIN_TILE * 2)
        self.setUniformItemSizes(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setMouseTracking(True)
        self.setMovement(QListView.Movement.Static)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setFrameShape(QListView.Shape.NoFrame)
        # the viewport by its name: ``viewport()`` makes shiboken find the best Python type
        # for a widget Qt created, initialising every QtWidgets class (~10 ms of the start)
        viewport = self.findChild(QWidget, "qt_scrollarea_viewport")
        (viewport if viewport is not None else self.viewport()).setAutoFillBackground(False)
        self.set_grid_mode(True)

    def cell_size(self) -> QSize:
        return self._cell

    def cover_size(self) -> QSize:
        """The size a cover is painted at (the delegate uses the same sums)."""
        if self.grid_mode:
            width = self._cell.width() - 2 * TILE_PAD
            return QSize(width, round(width * 1.5))
        height = self._cell.height() - 2 * ROW_PAD
        return QSize(round(height / 1.5), height)

    def set_grid_mode(self, grid: bool) -> None:
        self.grid_mode = grid
        if grid:
            self.setViewMode(QListView.ViewMode.IconMode)
            self.setFlow(QListView.Flow.LeftToRight)
            self.setWrapping(True)
        else:
            self.setViewMode(QListView.ViewMode.ListMode)
            self.setFlow(QListView.Flow.TopToBottom)
            self.setWrapping(False)
        self.setMovement(QListView.Movement.Static)
        self.setSpacing(0)
        self.update_cells()

    def update_cells(self) -> None:
        """Grid cells stretch so the columns fill the width (no ragged gap on the right)."""
        if self.grid_mode:
            # QListView lays a wrapping grid out as if the vertical scroll bar were shown
            extent = self.style().pixelMetric(
                QStyle.PixelMetric.PM_ScrollBarExtent, None, self.verticalScrollBar()
            )
            width = max(MIN_TILE, self.maximumViewportSize().width() - extent - 1)
            columns = max(1, width // MIN_TILE)
            cell_w = width // columns
            cover_h = round((cell_w - 2 * TILE_PAD) * 1.5)
            cell = QSize(cell_w, TILE_PAD + cover_h + 5 + TEXT_BLOCK)
        else:
            cell = QSize(max(MIN_TILE, self.viewport().width() - 1), LIST_ROW)
        if cell != self._cell:
            self._cell = cell
            if self.covers is not None:
                self.covers.set_display_size(self.cover_size(), self.devicePixelRatioF())
            if self.grid_mode:
                self.setGridSize(cell)
            else:
                self.setGridSize(QSize())
            self.scheduleDelayedItemsLayout()
        self.verticalScrollBar().setSingleStep(max(20, cell.height() // 4))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.update_cells()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        index = self.currentIndex()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and index.isValid():
            self.requestOpenRow.emit(index)
            event.accept()
            return
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and index.isValid():
            self.requestRemoveRow.emit(index)
            event.accept()
            return
        super().keyPressEvent(event)
