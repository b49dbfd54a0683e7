"""Search the whole library: "where did I read about X?". Results are grouped by book, each
book searched up to where the reader has read it unless they tick the box; activating a
passage asks the window to open its page with the words marked (``requestOpenPage``).

The search runs on a worker thread (``core.search.BookSearch.search_all``); typing restarts
it after a short pause, and a newer search replaces an older one still running.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.search import MARK_END, MARK_START, SearchHit
from core.search.vector_indexer import indexer_for
from desktop.requests import OpenPageRequest
from desktop.tasks import TaskKeeper, run_blocking

if TYPE_CHECKING:
    from core.app import Margin

log = logging.getLogger("margin.library_search")

PAUSE_MS = 250  # typing pause before searching
HIT_ROLE = Qt.ItemDataRole.UserRole
_MARKED = re.compile(re.escape(MARK_START) + "(.*?)" + re.escape(MARK_END))


def quote_of(hit: SearchHit) -> str:
    """Words of the passage to mark on its page: the matched words from the snippet, or the
    passage's opening words."""
    marked = _MARKED.findall(hit.snippet)
    if marked:
        return marked[0]
    return " ".join(hit.text.split()[:8])


def shown_snippet(hit: SearchHit) -> str:
    return " ".join(hit.snippet.replace(MARK_START, "").replace(MARK_END, "").split())


class LibrarySearch(QDialog):
    """The library-wide search window."""

    requestOpenPage = Signal(object)  # OpenPageRequest
    vectorsProgressed = Signal(int, int)  # books given vectors so far, of how many

    def __init__(self, app: Margin, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.app = app
        self.tasks = TaskKeeper()
        self.setWindowTitle("Search the library")
        self.setObjectName("librarySearch")
        self.resize(640, 480)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search every book, in your own words…")
        self.query.setClearButtonEnabled(True)
        self.beyond = QCheckBox("Include pages beyond where I have read", self)
        self.include = QPushButton("Include them", self)  # the books the bound left out
        self.include.setAccessibleName("Include the books not read that far")
        self.include.hide()
        self.include.clicked.connect(lambda: self.beyond.setChecked(True))
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.preparing = QLabel("", self)
        self.preparing.setObjectName("preparingVectors")
        self.preparing.hide()
        self.results = QTreeWidget(self)
        self.results.setHeaderLabels(["Passage", "Pages"])
        self.results.setRootIsDecorated(True)
        self.results.setWordWrap(True)
        self.results.setColumnWidth(0, 480)
        layout = QVBoxLayout(self)
        widgets = (self.query, self.beyond, self.status, self.include, self.results)
        for widget in (*widgets, self.preparing):
            layout.addWidget(widget)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PAUSE_MS)
        self.timer.timeout.connect(self.search)
        self.query.textChanged.connect(lambda _text: self.timer.start())
        self.query.returnPressed.connect(self.search)
        self.beyond.toggled.connect(lambda _on: self.search())
        self.results.itemActivated.connect(self._activated)
        # books from before search by meaning get their vectors in the background; the
        # indexer reports from its thread, the signal brings it to this one
        self.vectorsProgressed.connect(self._vectors_progress)
        self.indexer = indexer_for(app.library.db)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.vectorsProgressed.emit not in self.indexer.listeners:
            self.indexer.listeners.append(self.vectorsProgressed.emit)
        self.indexer.request()

    def _vectors_progress(self, done: int, total: int) -> None:
        self.preparing.setVisible(done < total)
        self.preparing.setText(
            f"Preparing search by meaning: {done} of {total} books. Until then those books "
            "are searched by their words."
        )

    def search(self) -> None:
        """Search for the typed words now (a running search is replaced)."""
        self.timer.stop()
        query = self.query.text().strip()
        if not query:
            self.tasks.cancel("search")
            self.results.clear()
            self.status.setText("")
            return
        self.status.setText("Searching…")
        self.tasks.start(self._search(query, bounded=not self.beyond.isChecked()), key="search")

    async def _search(self, query: str, *, bounded: bool) -> None:
        try:
            grouped = await run_blocking(self.app.search.search_all, query, bounded=bounded)
            titles = {b.id: b.title for b in await run_blocking(self.app.library.list_books)}
            shown = {book_id for book_id, _ in grouped}
            left = await run_blocking(self.app.search.left_out, query, shown) if bounded else 0
        except MarginError as exc:
            self.results.clear()
            self.status.setText(str(exc))
            return
        except Exception:
            log.exception("library search failed")
            self.results.clear()
            self.status.setText("The search failed. Details are in the log.")
            return
        self.show_results(query, grouped, titles, bounded=bounded)
        self.show_left_out(left)

    def show_left_out(self, left: int) -> None:
        """Say how many books the bound left out, with one click to include them."""
        self.include.setVisible(left > 0)
        if left:
            books = f"{left} book{'s' if left != 1 else ''}"
            verb = "matches" if left == 1 else "match"
            self.status.setText(
                f"{self.status.text()} {books} you have not read that far also {verb}."
            )

    def show_results(
        self,
        query: str,
        grouped: list[tuple[int, list[SearchHit]]],
        titles: dict[int, str],
        *,
        bounded: bool,
    ) -> None:
        self.results.clear()
        if not grouped:
            where = " up to where you have read" if bounded else ""
            self.status.setText(f"No passages{where} match “{query}”.")
            return
        count = sum(len(hits) for _, hits in grouped)
        self.status.setText(
            f"{count} passage{'s' if count != 1 else ''} in {len(grouped)} "
            f"book{'s' if len(grouped) != 1 else ''}. Double-click one to open its page."
        )
        for book_id, hits in grouped:
            book = QTreeWidgetItem([titles.get(book_id, f"Book {book_id}"), ""])
            font = book.font(0)
            font.setBold(True)
            book.setFont(0, font)
            for hit in hits:
                item = QTreeWidgetItem([shown_snippet(hit), hit.pages])
                item.setData(0, HIT_ROLE, hit)
                item.setToolTip(0, shown_snippet(hit))
                book.addChild(item)
            self.results.addTopLevelItem(book)
            book.setExpanded(True)

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        hit: object = item.data(0, HIT_ROLE)
        if isinstance(hit, SearchHit):
            self.requestOpenPage.emit(OpenPageRequest(hit.book_id, hit.start_page, quote_of(hit)))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.tasks.cancel("search")
        super().closeEvent(event)

    def done(self, result: int) -> None:
        if self.vectorsProgressed.emit in self.indexer.listeners:
            self.indexer.listeners.remove(self.vectorsProgressed.emit)
        super().done(result)
