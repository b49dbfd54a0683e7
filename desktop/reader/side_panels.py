"""The reader's side panel: Contents, Find and Highlights, plus a slot for companion panels
(notes, X-Ray, recaps, threads …) that other parts of the window add by name. It opens
beside the book without shrinking it below 55 % of the window (the chat, then the panel
itself, give way).

Each panel follows the book through the reader's events (``desktop/events.py``), given to it
when it is built; a companion panel is any widget added by name."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QSplitter, QTabWidget, QToolButton, QVBoxLayout, QWidget

from core.store.library import Library
from desktop.events import Events
from desktop.highlights.panel import HighlightsPanel
from desktop.reader.contents_panel import ContentsPanel
from desktop.reader.find_panel import FindPanel, OpenBook
from desktop.reader.tab_rows import TabRows

BOOK_SHARE = 0.55  # the book keeps at least this share of the window beside the panels
SIDE_MIN = 170  # pixels: the side panel gives way down to this (its narrowest)
SIDE_START = 320  # and starts this wide: its tabs in two rows, a line of some 45 characters
CHAT_MIN = 280  # and the chat down to this (desktop.window.layout.CHAT_MIN)


def fit_book(
    window_width: int,
    side: int,
    book: int,
    chat: int,
    side_min: int = SIDE_MIN,
    chat_min: int = CHAT_MIN,
) -> tuple[int, int, int]:
    """(side, book, chat) widths with the book at least ``BOOK_SHARE`` of the window: the
    chat gives way first (down to ``chat_min``), then the side panel (to ``side_min``)."""
    need = math.ceil(BOOK_SHARE * window_width) - book
    if need <= 0:
        return side, book, chat
    from_chat = max(0, min(need, chat - chat_min)) if chat > 0 else 0
    chat -= from_chat
    need -= from_chat
    from_side = max(0, min(need, side - side_min))
    side -= from_side
    return side, book + from_chat + from_side, chat


class SidePanels(QTabWidget):
    def __init__(
        self, events: Events, library: Library, book: OpenBook, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.rows: TabRows | None = None
        self.contents = ContentsPanel(events, library)
        self.finder = FindPanel(events, book)
        self.highlights = HighlightsPanel(events, library)
        self.addTab(self.contents, "Contents")
        self.addTab(self.finder, "Find")
        self.addTab(self.highlights, "Highlights")
        # the tab bar's scroll arrows: 24 × 24 at least (WCAG 2.5.8), not Qt's 16 × 26
        # (sized directly: a style sheet on the bar would drop the theme's palette)
        for arrow in self.tabBar().findChildren(QToolButton):
            arrow.setMinimumSize(24, 24)
        # narrow beside the book: names shortened rather than scrolled out of sight (no style
        # sheet for tighter tabs: a style sheet here kept the panel in the light theme's
        # colours when the window turned dark)
        self.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.setUsesScrollButtons(False)
        for i in range(self.count()):
            self.setTabToolTip(i, self.tabText(i))
        self.companions: dict[str, QWidget] = {}
        self.finder.requestShown.connect(lambda: self.setCurrentWidget(self.finder))
        # the tabs in rows above the panels (every name in sight), the bar itself hidden:
        # the splitter holds ``column``, which shows and hides with the panel
        self.column = QWidget(parent)
        column = QVBoxLayout(self.column)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.rows = TabRows(self, self.column)
        column.addWidget(self.rows)
        column.addWidget(self, 1)
        self.tabBar().hide()
        self.setUsesScrollButtons(True)  # the hidden bar holds the panel no wider
        self.rows.rebuild()

    def setVisible(self, visible: bool) -> None:
        super().setVisible(visible)
        column: QWidget | None = getattr(self, "column", None)
        if column is not None and self.parentWidget() is column:
            column.setVisible(visible)

    def tabInserted(self, index: int) -> None:
        super().tabInserted(index)
        if self.rows is not None:
            self.rows.rebuild()

    def tabRemoved(self, index: int) -> None:
        super().tabRemoved(index)
        if self.rows is not None:
            self.rows.rebuild()

    # the book keeps its share of the window when the panel opens or the window resizes ----

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self.make_room)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._fitting:
            QTimer.singleShot(0, self.make_room)

    _fitting = False

    def _splitters(self) -> tuple[QSplitter, QSplitter | None] | None:
        """The splitter the panel is in (beside the book) and the window's (book | chat)."""
        inner = self.column.parentWidget()
        if not isinstance(inner, QSplitter):
            return None
        outer = inner.parentWidget()
        while outer is not None and not isinstance(outer, QSplitter):
            outer = outer.parentWidget()
        return inner, outer if isinstance(outer, QSplitter) else None

    def make_room(self) -> None:
        """Keep the book at its share of the window (the chat, then the panel, give way)."""
        found = self._splitters()
        if found is None or not self.column.isVisible():
            return
        inner, outer = found
        window = self.window().width()
        side, book = inner.sizes()[:2]
        chat = outer.sizes()[1] if outer is not None and len(outer.sizes()) > 1 else 0
        chat_min = CHAT_MIN
        chat_widget = outer.widget(1) if outer is not None and outer.count() > 1 else None
        if chat_widget is not None:
            chat_min = max(CHAT_MIN, chat_widget.minimumSizeHint().width())
        side_min = max(SIDE_MIN, self.column.minimumSizeHint().width())
        new_side, _, new_chat = fit_book(window, side, book, chat, side_min, chat_min)
        if (new_side, new_chat) == (side, chat):
            return
        self._fitting = True
        inner_width = sum(inner.sizes()) + chat - new_chat  # what the chat gave the reader
        try:
            if outer is not None and new_chat != chat:
                first = outer.sizes()[0]
                outer.setSizes([first + chat - new_chat, new_chat])
            inner.setSizes([new_side, inner_width - new_side])
        finally:
            self._fitting = False

    def add_panel(self, name: str, panel: QWidget) -> None:
        """Add (or replace) the companion panel called ``name`` as a tab of its own."""
        old = self.companions.pop(name, None)
        if old is not None:
            self.removeTab(self.indexOf(old))
        self.companions[name] = panel
        # a companion's widest row (a job bar's buttons) must not hold the panel, and with it
        # the book, wider than the panel's narrowest: its rows are cut there until widened
        panel.setMinimumWidth(min(panel.minimumSizeHint().width(), SIDE_MIN - 10))
        self.setTabToolTip(self.addTab(panel, name), name)
        if self.rows is not None:
            self.rows.rebuild()  # its tooltip too

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
