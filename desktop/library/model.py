"""The library's books as a Qt list model: sorted (recently read, title, author) and
filtered in Python, each book's data under ``BOOK_ID`` and ``BOOK``."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from core.store.book_info import BookInfo
from desktop.library.covers import CoverJob

BOOK_ID = Qt.ItemDataRole.UserRole + 1
BOOK = Qt.ItemDataRole.UserRole + 2
SORTS = {"recent": "Recently read", "title": "Title", "author": "Author"}
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

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> object:
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
