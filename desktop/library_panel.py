"""The library: the reader's books with author, format and progress; filter, open, remove;
and the import area (progress bar, Cancel, errors in words)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.store.library import BookInfo
from desktop.widgets import tool_button

BOOK_ID = Qt.ItemDataRole.UserRole + 1
EMPTY_TEXT = "Your library is empty.\n\nOpen a book with File → Open… (Ctrl+O)\nor drag a file here.\n\nEPUB, PDF, text, Markdown and HTML."


def book_line(book: BookInfo) -> str:
    author = f"\n{book.author}" if book.author else ""
    done = "finished" if book.finished else f"{book.progress:.0%} read"
    return f"{book.title}{author}\n{book.format.upper()} · {book.page_count} pages · {done}"


class LibraryPanel(QWidget):
    requestOpen = Signal(int)
    requestRemove = Signal(int)
    requestImport = Signal()
    requestCancelImport = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Library")
        self.filter = QLineEdit(placeholderText="Filter books…")
        self.filter.setAccessibleName("Filter books")
        self.filter.setClearButtonEnabled(True)
        add = tool_button("+")
        add.setToolTip("Add books (Ctrl+O)")
        add.setAccessibleName("Add books")
        add.clicked.connect(self.requestImport)
        top = QHBoxLayout()
        top.addWidget(self.filter)
        top.addWidget(add)
        self.model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.view = QListView()
        self.view.setModel(self.proxy)
        self.view.setAccessibleName("Books")
        self.view.setWordWrap(True)
        self.view.setSpacing(3)
        self.view.setUniformItemSizes(False)
        self.view.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.view.activated.connect(self._activated)
        self.view.doubleClicked.connect(self._activated)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setAccessibleName("Empty library")
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
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e;")
        self.error.setAccessibleName("Import errors")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel)
        self.import_box = QWidget()
        box = QVBoxLayout(self.import_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.progress_label)
        box.addLayout(row)
        self.import_box.hide()
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.import_box)
        layout.addWidget(self.error)
        self.set_books([])

    def set_books(self, books: list[BookInfo], current: int | None = None) -> None:
        self.model.clear()
        for book in books:
            item = QStandardItem(book_line(book))
            item.setData(book.id, BOOK_ID)
            item.setToolTip(f"{book.title}\n{book.original_path}")
            item.setAccessibleText(
                f"{book.title} by {book.author or 'unknown author'}, {book.progress:.0%} read"
            )
            self.model.appendRow(item)
        self.view.setVisible(bool(books))
        self.empty.setVisible(not books)
        if current is not None:
            self.select(current)

    def select(self, book_id: int) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(BOOK_ID) == book_id:
                self.view.setCurrentIndex(index)
                return

    def book_ids(self) -> list[int]:
        return [int(self.model.item(r).data(BOOK_ID)) for r in range(self.model.rowCount())]

    def _activated(self, index: object) -> None:
        book_id = getattr(index, "data", lambda *_: None)(BOOK_ID)
        if book_id is not None:
            self.requestOpen.emit(int(book_id))

    def _menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        book_id = int(index.data(BOOK_ID))
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.requestOpen.emit(book_id))
        menu.addAction("Remove from library…", lambda: self.requestRemove.emit(book_id))
        menu.exec(self.view.viewport().mapToGlobal(pos))

    # import area -------------------------------------------------------------------

    def import_started(self, name: str) -> None:
        self.error.hide()
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
