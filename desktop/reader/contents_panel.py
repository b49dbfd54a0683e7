"""The Contents side panel: the book's table of contents with a page column, the current
chapter in bold, or a sentence when the book has none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QLabel, QStackedWidget, QTreeWidget, QTreeWidgetItem

from core.books.model import TocItem
from desktop.events import BookClosed, BookOpening, Events, PageShown
from desktop.reader.pages import PAGE_ROLE, PageLabels


class TocSource(Protocol):
    def toc(self, book_id: int) -> list[TocItem]: ...


class ContentsPanel(QStackedWidget):
    requestPage = Signal(int)  # a contents entry was chosen: jump there
    requestFocusBook = Signal()  # after a click, the keys read the book again

    def __init__(self, events: Events, library: TocSource) -> None:
        super().__init__()
        events.subscribe(BookOpening, lambda e: self.fill(library.toc(e.book.id), e.labels))
        events.subscribe(PageShown, lambda e: self.follow(e.page))
        events.subscribe(BookClosed, lambda _e: self.clear())
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setColumnCount(2)
        self.tree.setAccessibleName("Table of contents")
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.itemActivated.connect(self.go)
        self.tree.itemClicked.connect(self.go)
        self.tree.itemClicked.connect(lambda *_: self.requestFocusBook.emit())
        self.empty = QLabel(
            "This book has no table of contents. Use Find (Ctrl+F) or Go to page (Ctrl+G) "
            "to move around."
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.empty.setContentsMargins(8, 8, 8, 8)
        self.addWidget(self.tree)
        self.addWidget(self.empty)
        self.items: list[tuple[int, QTreeWidgetItem]] = []

    def fill(self, entries: Sequence[TocItem], labels: PageLabels) -> None:
        self.tree.clear()
        self.items = []
        parents: list[QTreeWidgetItem] = []
        for entry in entries:
            item = QTreeWidgetItem([entry.title, labels.short(entry.page)])
            item.setData(0, PAGE_ROLE, entry.page)
            item.setToolTip(0, f"{entry.title} — {labels.long(entry.page)}")
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            level = max(1, entry.level)
            parents = parents[: level - 1]
            if parents:
                parents[-1].addChild(item)
            else:
                self.tree.addTopLevelItem(item)
            parents.append(item)
            self.items.append((entry.page, item))
        self.tree.expandToDepth(0)
        self.setCurrentWidget(self.tree if self.items else self.empty)

    def clear(self) -> None:
        self.tree.clear()
        self.items = []

    def go(self, item: QTreeWidgetItem, *_: object) -> None:
        page = item.data(0, PAGE_ROLE)
        if page:
            self.requestPage.emit(int(page))

    def chapter_at(self, page: int) -> QTreeWidgetItem | None:
        """The contents entry ``page`` belongs to."""
        found = None
        for start, item in self.items:
            if start and start <= page:
                found = item
        return found

    def follow(self, page: int) -> None:
        """Show the chapter of ``page`` in bold and in view."""
        current = self.chapter_at(page)
        for _page, item in self.items:
            bold = item is current
            if item.font(0).bold() != bold:
                font = item.font(0)
                font.setBold(bold)
                item.setFont(0, font)
                item.setFont(1, font)
        if current is not None and self.tree.currentItem() is not current:
            self.tree.blockSignals(True)
            self.tree.setCurrentItem(current)
            self.tree.blockSignals(False)
            self.tree.scrollToItem(current)
