"""A line above the conversation when the open book's pages are pictures without text
(scanned PDF pages, comics): the assistant cannot read them, and the reader is told so
before asking. Counted on a worker thread when the book changes.

For a PDF, when the system has the ``tesseract`` program, the line offers to recognise the
text (``core.books.ocr``): it runs in the background with its progress here and a Stop, and
the pages' text is then searchable and cited."""

from __future__ import annotations

import asyncio
import logging
import time

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.errors import BookCode, MarginError
from core.progress import CancelToken
from core.store.library import Library
from desktop.tasks import in_background, run_blocking

log = logging.getLogger("margin.ocr")


class PicturesNotice(QFrame):
    recognised = Signal(int)  # book id: its pages now have the text found in them
    _progressed = Signal(int, str)  # from the worker thread, queued to the window's

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("picturesNotice")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setAccessibleName("About this book's pages")
        self.progress = QLabel()
        self.progress.setWordWrap(True)
        self.ocr_button = QPushButton("Recognise the text")
        self.ocr_button.setAccessibleName("Recognise the text of the pictures (OCR)")
        self.ocr_button.setToolTip("Read the words on these pages with tesseract, on this computer")
        self.ocr_button.clicked.connect(self.start_ocr)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop recognising text")
        self.stop_button.clicked.connect(self.stop_ocr)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.progress, 1)
        buttons.addStretch(0)
        for button in (self.ocr_button, self.stop_button):
            button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        self._progressed.connect(self._progress)
        self.hide()
        self._book_id: int | None = None
        self._library: Library | None = None
        self._token: CancelToken | None = None
        self._task: asyncio.Task[None] | None = None
        self._show_buttons(offer=False)

    def _show_buttons(self, *, offer: bool) -> None:
        running = self._token is not None
        self.ocr_button.setVisible(offer and not running)
        self.stop_button.setVisible(running)
        self.progress.setVisible(running or bool(self.progress.text()))

    def set_book(self, library: Library, book_id: int | None) -> None:
        if book_id != self._book_id:
            self.stop_ocr()
            self.progress.setText("")
        self._book_id, self._library = book_id, library
        self.hide()
        if book_id is None:
            return
        from core.books.pictures import notice, pages_without_text

        def count() -> tuple[str, bool]:
            without, total = pages_without_text(library, book_id)
            book = library.get_book(book_id)
            if book.format != "pdf":  # (text recognition and pdfium load for PDFs only)
                return notice(without, total, book.format), False
            from core.books import ocr

            return notice(without, total, book.format), ocr.available()

        def show(found: tuple[str, bool]) -> None:
            if shiboken6.isValid(self) and book_id == self._book_id:
                self.text.setText(found[0])
                self._show_buttons(offer=found[1])
                self.setVisible(bool(found[0]) or self._token is not None)

        in_background(count, then=show, failed=lambda _exc: None)

    # text recognition ---------------------------------------------------------------------

    def start_ocr(self) -> None:
        if self._book_id is None or self._library is None or self._token is not None:
            return
        self._token = CancelToken()
        self.progress.setText("Recognising the text…")
        self._show_buttons(offer=False)
        self._task = asyncio.ensure_future(self._run(self._library, self._book_id, self._token))

    def stop_ocr(self) -> None:
        if self._token is not None:
            self._token.cancel()

    async def _run(self, library: Library, book_id: int, token: CancelToken) -> None:
        from core.books.ocr import recognise_book
        from desktop.reader.password_dialog import known

        last = 0.0

        def progress(fraction: float, message: str) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last > 0.2 or fraction >= 1.0:
                last = now
                self._progressed.emit(book_id, message)

        try:
            book = library.get_book(book_id)
            _, pages = await run_blocking(
                recognise_book,
                library,
                book_id,
                password=known(book.sha256),
                progress=progress,
                cancel=token,
            )
        except MarginError as exc:
            said = (
                "Stopped: the pages are as they were."
                if exc.code == BookCode.CANCELLED
                else f"The text could not be recognised: {exc}"
            )
            self._finish(book_id, said)
            return
        except Exception:
            log.exception("text recognition of book %s failed", book_id)
            self._finish(book_id, "The text could not be recognised (details in the log).")
            return
        self._finish(
            book_id,
            f"Text found on {pages} page{'s' if pages != 1 else ''}: search and the "
            "assistant can read it now.",
        )
        if pages:
            self.recognised.emit(book_id)

    def _progress(self, book_id: int, message: str) -> None:
        if shiboken6.isValid(self) and book_id == self._book_id and self._token is not None:
            self.progress.setText(message)

    def _finish(self, book_id: int, said: str) -> None:
        self._token = None
        if not shiboken6.isValid(self):
            return
        if book_id == self._book_id and self._library is not None:
            self.progress.setText(said)
            self.set_book(self._library, book_id)  # counted again
        else:
            self._show_buttons(offer=False)
