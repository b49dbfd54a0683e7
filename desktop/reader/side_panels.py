"""The reader's side panel: Contents, Find and Highlights, plus a slot for companion panels
(notes, X-Ray, recaps, threads …) that other parts of the window add by name.

A companion panel is any widget; if it has a ``page_shown(book_id, page)`` method it is told
each time the page on screen changes, and ``book_opened(book_id)`` when a book opens."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget

from desktop.reader.contents_panel import ContentsPanel
from desktop.reader.find_panel import FindPanel
from desktop.reader.highlights_panel import HighlightsPanel


class SidePanels(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.contents = ContentsPanel()
        self.finder = FindPanel()
        self.highlights = HighlightsPanel()
        self.addTab(self.contents, "Contents")
        self.addTab(self.finder, "Find")
        self.addTab(self.highlights, "Highlights")
        self.companions: dict[str, QWidget] = {}
        self.finder.requestShown.connect(lambda: self.setCurrentWidget(self.finder))

    def add_panel(self, name: str, panel: QWidget) -> None:
        """Add (or replace) the companion panel called ``name`` as a tab of its own."""
        old = self.companions.pop(name, None)
        if old is not None:
            self.removeTab(self.indexOf(old))
        self.companions[name] = panel
        self.addTab(panel, name)

    def focus_find(self) -> None:
        self.setCurrentWidget(self.finder)
        self.finder.box.setFocus()
        self.finder.box.selectAll()

    def panel(self, name: str) -> QWidget | None:
        return self.companions.get(name)

    def show_panel(self, name: str) -> bool:
        """Bring a panel to the front by its tab name ("Contents", "Find", a companion's)."""
        for i in range(self.count()):
            if self.tabText(i) == name:
                self.setCurrentIndex(i)
                return True
        return False

    def current_name(self) -> str:
        return self.tabText(self.currentIndex()) if self.count() else ""

    def book_opened(self, book_id: int) -> None:
        for panel in self.companions.values():
            hook = getattr(panel, "book_opened", None)
            if callable(hook):
                hook(book_id)

    def page_shown(self, book_id: int, page: int) -> None:
        for panel in self.companions.values():
            hook = getattr(panel, "page_shown", None)
            if callable(hook):
                hook(book_id, page)
