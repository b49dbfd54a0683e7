"""The library: the reader's books as a grid of covers (or a list) with title, author and how
far they have read; sort, filter, open, remove; and the import area (progress, Cancel, errors).

One model and one delegate paint every book (no widget per book), so a library of 500 books
opens and scrolls without stalls; covers arrive from ``CoverStore`` in worker threads and a
placeholder in the book's own colour stands in until then.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPoint,
    QRect,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QHideEvent, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.store.book_info import BookInfo
from desktop.library.covers import CoverStore
from desktop.library.grid import BookDelegate, LibraryListView
from desktop.library.model import BOOK_ID, SORTS, LibraryModel, cover_job
from desktop.widgets import tool_button

__all__ = ["BOOK_ID", "EMPTY_TEXT", "LibraryView", "cover_job"]
EMPTY_TEXT = (
    "Your library is empty.\n\nOpen a book… or drag a file here.\n\n"
    "EPUB, PDF, text, Markdown and HTML."
)
PRELOAD = 1000  # covers and text prepared ahead for this many books (about 80 MB at most)
WARM_DELAY_MS = 250


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
        # a visible label: a screen reader names the box by it (labelled-by), not by its value
        sort_label = QLabel("S&ort:")
        sort_label.setBuddy(self.sort)
        second = QHBoxLayout()
        second.setSpacing(4)
        second.addWidget(sort_label)
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
        if self.isVisible():
            self.covers.preload(jobs[:PRELOAD])
            self._warm_from(0)
        else:  # behind a book (an import while reading): read ahead when the shelf shows
            self._released = True

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

    # while a book hides the shelf, only the covers and text around its place stay in memory

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        if not event.spontaneous():  # (a minimised window keeps them)
            self.release_hidden()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._released:
            self._released = False
            self.covers.preload([cover_job(b) for b in self.model.rows[:PRELOAD]])
            self._warm_from(0)

    _released = False

    def release_hidden(self) -> None:
        """Keep the covers and text of the books on screen and a screen either side; the
        rest are read again in idle turns when the shelf shows."""
        self._warm.stop()
        viewport = self.view.viewport().rect()
        near = viewport.adjusted(0, -viewport.height(), 0, viewport.height())
        kept = [
            book
            for row, book in enumerate(self.model.rows)
            if self.view.visualRect(self.model.index(row, 0)).intersects(near)
        ]
        self.covers.keep_only({b.sha256 for b in kept})
        self.delegate.keep_only({b.id for b in kept})
        self._released = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view and event.type() == QEvent.Type.Show:
            self.view.update_cells()
        return super().eventFilter(watched, event)
