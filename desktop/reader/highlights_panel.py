"""The Highlights side panel: the book's highlights and their notes; choosing one opens the
book at its own place (the anchor's offset when it has one, else its words on its page)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from core.store.library import HighlightRecord
from desktop.reader.pages import ANCHOR_ROLE, PAGE_ROLE, PageLabels


class HighlightsPanel(QListWidget):
    requestPlace = Signal(int, str, int)  # page, its words, offset where it starts (-1: unknown)
    requestFocusBook = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setAccessibleName("Highlights")
        self.setWordWrap(True)
        self.itemActivated.connect(self.go_item)
        self.itemClicked.connect(self.go_item)
        self.itemClicked.connect(lambda *_: self.requestFocusBook.emit())

    def fill(self, highlights: Sequence[HighlightRecord], labels: PageLabels) -> None:
        self.clear()
        for h in highlights:
            note = f"\n{h.note}" if h.note else ""
            item = QListWidgetItem(f"{labels.long(h.page)} — {h.text[:160]}{note}")
            item.setData(PAGE_ROLE, (h.page, h.text))
            start = h.anchor.get("start") if isinstance(h.anchor, dict) else None
            if isinstance(start, dict) and isinstance(start.get("offset"), int):
                item.setData(ANCHOR_ROLE, (int(start.get("page", h.page)), start["offset"]))
            self.addItem(item)

    def go_item(self, item: QListWidgetItem) -> None:
        data = item.data(PAGE_ROLE)
        if not data:
            return
        page, words = data
        anchor = item.data(ANCHOR_ROLE)
        if anchor:  # a highlight that knows exactly where it starts
            self.requestPlace.emit(int(anchor[0]), words, int(anchor[1]))
        else:
            self.requestPlace.emit(int(page), words, -1)
