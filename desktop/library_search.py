"""Search the whole library: "where did I read about X?". Results are grouped by book, each
book searched up to where the reader has read it unless they tick the box; activating a
passage asks the window to open its page with the words marked (``requestOpenPage``).

The search runs on a worker thread (``core.search.BookSearch.search_all``); typing restarts
it after a short pause, and a newer search replaces an older one still running.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QLabel,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.search import MARK_END, MARK_START, SearchHit
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
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.results = QTreeWidget(self)
        self.results.setHeaderLabels(["Passage", "Pages"])
        self.results.setRootIsDecorated(True)
        self.results.setWordWrap(True)
        self.results.setColumnWidth(0, 480)
        layout = QVBoxLayout(self)
        for widget in (self.query, self.beyond, self.status, self.results):
            layout.addWidget(widget)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PAUSE_MS)
        self.timer.timeout.connect(self.search)
        self.query.textChanged.connect(lambda _text: self.timer.start())
        self.query.returnPressed.connect(self.search)
        self.beyond.toggled.connect(lambda _on: self.search())
        self.results.itemActivated.connect(self._activated)

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
        hit: Any = item.data(0, HIT_ROLE)
        if isinstance(hit, SearchHit):
            self.requestOpenPage.emit(OpenPageRequest(hit.book_id, hit.start_page, quote_of(hit)))

    def closeEvent(self, event: Any) -> None:
        self.tasks.cancel("search")
        super().closeEvent(event)
