"""The library: the reader's books as a grid of covers (or a list) with title, author and how
far they have read; sort, filter, open, remove; and the import area (progress, Cancel, errors).

One model and one delegate paint every book (no widget per book), so a library of 500 books
opens and scrolls without stalls; covers arrive from ``CoverStore`` in worker threads and a
placeholder in the book's own colour stands in until then.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QProgressBar,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.books.covers import cover_colour
from core.store.library import BookInfo
from desktop.covers import CoverJob, CoverStore
from desktop.widgets import tool_button

BOOK_ID = Qt.ItemDataRole.UserRole + 1
BOOK = Qt.ItemDataRole.UserRole + 2
EMPTY_TEXT = (
    "Your library is empty.\n\nOpen a book… or drag a file here.\n\n"
    "EPUB, PDF, text, Markdown and HTML."
)
SORTS = {"recent": "Recently read", "title": "Title", "author": "Author"}
MIN_TILE = 96  # narrowest grid cell, so a 230-pixel panel still shows two columns
TEXT_BLOCK = 58  # title (two lines), author and the progress bar under a cover
LIST_ROW = 64
PRELOAD = 1000  # covers and text prepared ahead for this many books (about 80 MB at most)
WARM_DELAY_MS = 250
TILE_PAD = 8
ROW_PAD = 6
_EPOCH = dt.datetime(1970, 1, 1)


def _recent_key(book: BookInfo) -> dt.datetime:
    when = book.opened_at or book.added_at or _EPOCH
    return when.replace(tzinfo=None) if when.tzinfo else when


def _text_key(text: str) -> str:
    return text.strip().casefold()


def _author_key(author: str) -> str:
    """Sort "Lewis Carroll" under C; "Carroll, Lewis" stays under C."""
    author = author.strip()
    if not author:
        return "\uffff"  # books without an author go last
    if "," in author:
        return author.casefold()
    parts = author.split()
    return " ".join([parts[-1], *parts[:-1]]).casefold()


def progress_text(book: BookInfo) -> str:
    return "Finished" if book.finished else f"{book.progress:.0%}"


class LibraryModel(QAbstractListModel):
    """The books, sorted and filtered in Python (500 books take well under a millisecond)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.books: list[BookInfo] = []
        self.rows: list[BookInfo] = []
        self.sort_key = "recent"
        self.filter = ""
        self._row_of_sha: dict[str, int] = {}

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        book = self.rows[index.row()]
        if role == BOOK_ID:
            return book.id
        if role == BOOK:
            return book
        if role == Qt.ItemDataRole.DisplayRole:
            return book.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{book.title}\n{book.author or 'Unknown author'}\n{book.original_path}"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{book.title} by {book.author or 'unknown author'}, {progress_text(book)} read"
        return None

    def set_books(self, books: list[BookInfo]) -> None:
        self.books = list(books)
        self._rebuild()

    def set_sort(self, key: str) -> None:
        if key not in SORTS:
            raise ValueError(f"unknown sort {key!r}; choose one of {', '.join(SORTS)}")
        self.sort_key = key
        self._rebuild()

    def set_filter(self, text: str) -> None:
        self.filter = text.strip().casefold()
        self._rebuild()

    def sorted_books(self) -> list[BookInfo]:
        books = self.books
        if self.sort_key == "title":
            return sorted(books, key=lambda b: (_text_key(b.title), b.id))
        if self.sort_key == "author":
            return sorted(books, key=lambda b: (_author_key(b.author), _text_key(b.title), b.id))
        return sorted(books, key=lambda b: (_recent_key(b), b.id), reverse=True)

    def _rebuild(self) -> None:
        words = self.filter.split()
        rows = self.sorted_books()
        if words:
            rows = [
                b
                for b in rows
                if all(w in f"{b.title} {b.author} {b.format}".casefold() for w in words)
            ]
        self.beginResetModel()
        self.rows = rows
        self._row_of_sha = {b.sha256: i for i, b in enumerate(rows)}
        self.endResetModel()

    def row_of_sha(self, sha256: str) -> int:
        return self._row_of_sha.get(sha256, -1)

    def row_of(self, book_id: int) -> int:
        for row, book in enumerate(self.rows):
            if book.id == book_id:
                return row
        return -1


def cover_job(book: BookInfo) -> CoverJob:
    return CoverJob(book.sha256, book.format, book.file_path, book.title, book.author)


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
        dim.setAlpha(160)
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
        dim.setAlpha(160)
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
        self.viewport().setAutoFillBackground(False)
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

    def resizeEvent(self, event: Any) -> None:
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


class LibraryView(QWidget):
    requestOpen = Signal(int)
    requestRemove = Signal(int)
    requestImport = Signal()
    requestCancelImport = Signal()

    def __init__(self, data_dir: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if data_dir is None:
            from core.paths import resolve_paths

            data_dir = resolve_paths().data
        self.setAccessibleName("Library")
        self.covers = CoverStore(data_dir, self)
        # top row: filter, sort, grid/list, add
        self.filter = QLineEdit(placeholderText="Filter books…")
        self.filter.setAccessibleName("Filter books")
        self.filter.setClearButtonEnabled(True)
        self.sort = QComboBox()
        self.sort.setAccessibleName("Sort books")
        self.sort.setToolTip("Sort books")
        for key, label in SORTS.items():
            self.sort.addItem(label, key)
        self.grid_button = self._mode_button("▦", "Show covers in a grid")
        self.list_button = self._mode_button("☰", "Show books in a list")
        self.grid_button.setChecked(True)
        modes = QButtonGroup(self)
        modes.setExclusive(True)
        modes.addButton(self.grid_button)
        modes.addButton(self.list_button)
        add = tool_button("+")
        add.setToolTip("Add books (Ctrl+O)")
        add.setAccessibleName("Add books")
        add.clicked.connect(self.requestImport)
        top = QHBoxLayout()
        top.setSpacing(4)
        top.addWidget(self.filter, 1)
        top.addWidget(add)
        second = QHBoxLayout()
        second.setSpacing(4)
        second.addWidget(self.sort, 1)
        second.addWidget(self.grid_button)
        second.addWidget(self.list_button)
        # the books
        self.model = LibraryModel(self)
        self.view = LibraryListView()
        self.view.covers = self.covers
        self.covers.set_display_size(self.view.cover_size(), self.devicePixelRatioF())
        self.view.setModel(self.model)
        self.view.setAccessibleName("Books")
        self.delegate = BookDelegate(self.view, self.covers)
        self.view.setItemDelegate(self.delegate)
        self.view.activated.connect(self._open_index)
        self.view.requestOpenRow.connect(self._open_index)
        self.view.requestRemoveRow.connect(self._remove_index)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.filter.textChanged.connect(self._filter_changed)
        self.sort.currentIndexChanged.connect(self._sort_changed)
        self.grid_button.toggled.connect(lambda on: self.set_grid(on))
        self.covers.coverReady.connect(self._cover_ready)
        self._warm_row = 0
        self._warm = QTimer(self)
        self._warm.setSingleShot(True)
        self._warm.timeout.connect(self._warm_step)
        # the empty state
        self.empty_box = QWidget()
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setAccessibleName("Empty library")
        self.empty_open = QPushButton("Open a book…")
        self.empty_open.setAccessibleName("Open a book")
        self.empty_open.clicked.connect(self.requestImport)
        empty_layout = QVBoxLayout(self.empty_box)
        empty_layout.addStretch(1)
        empty_layout.addWidget(self.empty)
        empty_layout.addWidget(self.empty_open, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_layout.addStretch(1)
        self.no_match = QLabel("No book matches the filter.")
        self.no_match.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_match.setWordWrap(True)
        # import area
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Import progress")
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.cancel = QPushButton("Cancel")
        self.cancel.setAccessibleName("Cancel import")
        self.cancel.clicked.connect(self.requestCancelImport)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setForegroundRole(QPalette.ColorRole.BrightText)  # the theme's error colour
        self.error.setWordWrap(True)
        self.error.setAccessibleName("Import errors")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_close = tool_button("×")
        self.error_close.setAccessibleName("Dismiss the errors")
        self.error_close.setToolTip("Dismiss")
        self.error_close.clicked.connect(lambda: self.show_errors([]))
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel)
        self.import_box = QWidget()
        box = QVBoxLayout(self.import_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.progress_label)
        box.addLayout(row)
        self.error_box = QWidget()
        error_row = QHBoxLayout(self.error_box)
        error_row.setContentsMargins(0, 0, 0, 0)
        error_row.addWidget(self.error, 1)
        error_row.addWidget(self.error_close, 0, Qt.AlignmentFlag.AlignTop)
        self.import_box.hide()
        self.error_box.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addLayout(second)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.no_match, 1)
        layout.addWidget(self.empty_box, 1)
        layout.addWidget(self.import_box)
        layout.addWidget(self.error_box)
        self.view.installEventFilter(self)
        self.set_books([])

    def _mode_button(self, text: str, tip: str) -> QToolButton:
        button = tool_button(text)
        button.setCheckable(True)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        return button

    # the public interface the main window uses -------------------------------------------

    def set_books(self, books: list[BookInfo], current: int | None = None) -> None:
        selected = self.current_book_id() if current is None else current
        self.model.set_books(books)
        self._update_visibility()
        if selected is not None:
            self.select(selected)
        # covers for new books are made now, in the background, after the visible ones;
        # then covers and text are prepared in idle turns, so scrolling is plain copies
        jobs = [cover_job(b) for b in books]
        self.covers.prefetch(jobs)
        self.covers.preload(jobs[:PRELOAD])
        self._warm_from(0)

    def select(self, book_id: int) -> None:
        row = self.model.row_of(book_id)
        if row >= 0:
            index = self.model.index(row, 0)
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)

    def book_ids(self) -> list[int]:
        """Every book in the library, in the current sort order (the filter aside)."""
        return [b.id for b in self.model.sorted_books()]

    def visible_ids(self) -> list[int]:
        """The books shown, in order (after the filter)."""
        return [b.id for b in self.model.rows]

    def current_book_id(self) -> int | None:
        index = self.view.currentIndex()
        return int(index.data(BOOK_ID)) if index.isValid() else None

    def set_sort(self, key: str) -> None:
        self.sort.setCurrentIndex(list(SORTS).index(key))

    def set_grid(self, grid: bool) -> None:
        current = self.current_book_id()
        (self.grid_button if grid else self.list_button).setChecked(True)
        self.view.set_grid_mode(grid)
        if current is not None:
            self.select(current)

    # import area -------------------------------------------------------------------------

    def import_started(self, name: str) -> None:
        self.show_errors([])
        self.progress.setValue(0)
        self.progress_label.setText(f"Adding {name}…")
        self.import_box.show()

    def import_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        if message:
            self.progress_label.setText(message)

    def import_finished(self) -> None:
        self.import_box.hide()

    def show_errors(self, lines: list[str]) -> None:
        self.error.setText("\n\n".join(lines))
        self.error.setVisible(bool(lines))
        self.error_box.setVisible(bool(lines))

    # internals ---------------------------------------------------------------------------

    def _warm_from(self, row: int) -> None:
        """Prepare the text of every cell, after a pause: the cells on screen come first."""
        self._warm_row = row
        if not self._warm.isActive():
            self._warm.start(WARM_DELAY_MS)

    def _warm_step(self) -> None:
        """Draw the text under covers ahead of scrolling, a few milliseconds per idle turn."""
        start = time.perf_counter()
        rows = self.model.rows
        cell = QRect(QPoint(0, 0), self.view.cell_size())
        palette = self.view.palette()
        while self._warm_row < min(len(rows), PRELOAD) and time.perf_counter() - start < 0.002:
            self.delegate._block(cell, palette, rows[self._warm_row])
            self._warm_row += 1
        if self._warm_row < min(len(rows), PRELOAD):
            self._warm.start(0)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._warm_from(0)  # a new theme: new text colours

    def _update_visibility(self) -> None:
        has_books = bool(self.model.books)
        shown = bool(self.model.rows)
        self.view.setVisible(shown)
        self.no_match.setVisible(has_books and not shown)
        self.empty_box.setVisible(not has_books)

    def _filter_changed(self, text: str) -> None:
        current = self.current_book_id()
        self.model.set_filter(text)
        self._update_visibility()
        if current is not None:
            self.select(current)

    def _sort_changed(self, _row: int) -> None:
        current = self.current_book_id()
        self.model.set_sort(str(self.sort.currentData()))
        if current is not None:
            self.select(current)
        else:
            self.view.scrollToTop()

    def _cover_ready(self, sha: str) -> None:
        # only that book's cell; Qt merges the cells updated in one turn into one paint
        row = self.model.row_of_sha(sha)
        if row >= 0:
            self.view.update(self.model.index(row, 0))

    def _open_index(self, index: QModelIndex) -> None:
        book_id = index.data(BOOK_ID)
        if book_id is not None:
            self.requestOpen.emit(int(book_id))

    def _remove_index(self, index: QModelIndex) -> None:
        book_id = index.data(BOOK_ID)
        if book_id is not None:
            self.requestRemove.emit(int(book_id))

    def _menu(self, pos: QPoint) -> None:
        menu = self.context_menu(pos)
        if menu is not None:
            menu.exec(self.view.viewport().mapToGlobal(pos))

    def context_menu(self, pos: QPoint) -> QMenu | None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return None
        book_id = int(index.data(BOOK_ID))
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.requestOpen.emit(book_id))
        menu.addSeparator()
        menu.addAction("Remove from library…", lambda: self.requestRemove.emit(book_id))
        return menu

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view and event.type() == QEvent.Type.Show:
            self.view.update_cells()
        return super().eventFilter(watched, event)
