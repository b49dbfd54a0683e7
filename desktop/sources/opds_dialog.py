"""Browse an OPDS catalogue: its feeds (navigation and books), search, next and previous
pages, a book's summary, and Download into the library. Feeds are fetched on a worker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.sources.opds import Entry, Feed
from desktop.tasks import TaskKeeper, run_blocking

if TYPE_CHECKING:
    import asyncio

    from core.books.importer import ImportResult


class OpdsDialog(QDialog):
    def __init__(
        self,
        catalogues: list[str],
        import_file: Callable[[Path], ImportResult],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Browse a catalogue")
        self.resize(640, 520)
        self.tasks = TaskKeeper()
        self.import_file = import_file  # called on a worker thread with the downloaded file
        self.feed: Feed | None = None
        self.trail: list[str] = []
        self.address = QComboBox()
        self.address.setEditable(True)
        self.address.setAccessibleName("Catalogue address")
        self.address.addItems(catalogues)
        go = QPushButton("Open")
        go.clicked.connect(lambda: self.open_url(self.address.currentText().strip()))
        self.query = QLineEdit()
        self.query.setAccessibleName("Search the catalogue")
        self.query.setPlaceholderText("Search this catalogue")
        self.query.returnPressed.connect(self._search)
        self.entries = QListWidget()
        self.entries.setAccessibleName("Catalogue entries")
        self.entries.itemActivated.connect(self._activated)
        self.entries.currentItemChanged.connect(self._selected)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.back = QPushButton("Back")
        self.back.clicked.connect(self._back)
        self.more = QPushButton("Next page")
        self.more.clicked.connect(lambda: self.feed and self.open_url(self.feed.next))
        self.download = QPushButton("Download to library")
        self.download.clicked.connect(self._download)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Catalogue status")
        top = QHBoxLayout()
        top.addWidget(self.address, 1)
        top.addWidget(go)
        buttons = QHBoxLayout()
        for b in (self.back, self.more, self.download):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.query)
        layout.addWidget(self.entries, 1)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        self._buttons()

    def open_url(self, url: str, *, remember: bool = True) -> asyncio.Task[None] | None:
        if not url:
            return None
        return self.tasks.start(self._load(url, remember), key="feed")

    async def _load(self, url: str, remember: bool) -> None:
        from core.sources.opds import fetch

        self.status.setText("Loading…")
        try:
            feed = await run_blocking(fetch, url)
        except MarginError as exc:
            self.status.setText(str(exc))
            return
        if remember and self.feed is not None:
            self.trail.append(self.feed.url)
        self.feed = feed
        self.entries.clear()
        for entry in feed.entries:
            by = f" — {', '.join(entry.authors)}" if entry.authors else ""
            item = QListWidgetItem(entry.title + by)
            item.setData(Qt.ItemDataRole.UserRole, entry)
            self.entries.addItem(item)
        self.status.setText(f"{feed.title or url}: {len(feed.entries)} entries")
        self._buttons()

    def _buttons(self) -> None:
        self.back.setEnabled(bool(self.trail))
        self.more.setEnabled(bool(self.feed and self.feed.next))
        entry = self._entry()
        self.download.setEnabled(entry is not None and entry.best_download() is not None)
        self.query.setEnabled(bool(self.feed and self.feed.search))

    def _entry(self) -> Entry | None:
        item = self.entries.currentItem()
        return None if item is None else cast("Entry", item.data(Qt.ItemDataRole.UserRole))

    def _selected(self, *_: object) -> None:
        entry = self._entry()
        self.summary.setText(entry.summary[:600] if entry is not None else "")
        self._buttons()

    def _activated(self, item: QListWidgetItem) -> None:
        entry = item.data(Qt.ItemDataRole.UserRole)
        nav = entry.navigation
        if nav is not None and not entry.acquisitions:
            self.open_url(nav.href)
        elif entry.best_download() is not None:
            self._download()

    def _back(self) -> None:
        if self.trail:
            self.feed = None
            self.open_url(self.trail.pop(), remember=False)

    def _search(self) -> None:
        if self.feed is None or not self.query.text().strip():
            return
        self.tasks.start(self._do_search(self.feed, self.query.text().strip()), key="feed")

    async def _do_search(self, feed: Feed, terms: str) -> None:
        from core.sources.opds import search_url

        try:
            url = await run_blocking(search_url, feed, terms)
        except MarginError as exc:
            self.status.setText(str(exc))
            return
        await self._load(url, True)

    def _download(self) -> None:
        entry = self._entry()
        if entry is not None and entry.best_download() is not None:
            self.tasks.start(self._fetch_book(entry), key="download", replace=False)

    async def _fetch_book(self, entry: Entry) -> None:
        self.status.setText(f"Downloading {entry.title}…")
        try:
            title = await run_blocking(self._download_and_import, entry)
        except MarginError as exc:
            self.status.setText(str(exc))
            return
        self.status.setText(f"{title} is in your library.")

    def _download_and_import(self, entry: Entry) -> str:
        import tempfile

        from core.sources.opds import download

        link = entry.best_download()
        assert link is not None  # a download starts only for an entry that has one
        data, suffix = download(link)
        with tempfile.TemporaryDirectory(prefix="margin-opds-") as tmp:
            safe = "".join(c if c.isalnum() or c in " -_" else "_" for c in entry.title)[:80]
            path = Path(tmp) / f"{safe.strip() or 'book'}{suffix}"
            path.write_bytes(data)
            result = self.import_file(path)
        return str(result.book.title)

    def closeEvent(self, event: QCloseEvent) -> None:
        for key in ("feed", "download"):
            self.tasks.cancel(key)
        super().closeEvent(event)
