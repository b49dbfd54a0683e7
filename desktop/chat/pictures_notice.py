"""A line above the conversation when the open book's pages are pictures without text
(scanned PDF pages, comics): the assistant cannot read them, and the reader is told so
before asking. Counted on a worker thread when the book changes."""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QLabel, QWidget

from core.store.library import Library
from desktop.tasks import in_background


class PicturesNotice(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("picturesNotice")
        self.setWordWrap(True)
        self.setAccessibleName("About this book's pages")
        self.hide()
        self._book_id: int | None = None

    def set_book(self, library: Library, book_id: int | None) -> None:
        self._book_id = book_id
        self.hide()
        if book_id is None:
            return
        from core.books.pictures import notice, pages_without_text

        def count() -> str:
            without, total = pages_without_text(library, book_id)
            return notice(without, total, library.get_book(book_id).format)

        def show(text: str) -> None:
            if shiboken6.isValid(self) and book_id == self._book_id:
                self.setText(text)
                self.setVisible(bool(text))

        in_background(count, then=show, failed=lambda _exc: None)
