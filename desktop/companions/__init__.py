"""The companions in the window (issue 25): the X-Ray and the story-so-far tabs of the
reader's side panel, "Who is this?" on the selection bar (Ctrl+Shift+X), and the chat's
starters. ``install(window)`` adds them once the reading view is built."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from desktop.events import BookOpened, Events, HighlightsChanged, PageShown
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from desktop.companions.cards_panel import CardsPanel
    from desktop.companions.panel import CompanionFeed
    from desktop.companions.recap_panel import RecapPanel
    from desktop.companions.xray_panel import XRayPanel
    from desktop.reader.reader import Reader
    from desktop.window.main_window import MainWindow

WHO_IS_KEY = "Ctrl+Shift+X"


@dataclass(frozen=True)
class CompanionTabs:
    """What ``install`` added: the three tabs, "Who is this?" and its key."""

    xray: XRayPanel
    recap: RecapPanel
    cards: CardsPanel
    who_is: Callable[[], bool]
    action: QAction


def install(window: MainWindow) -> CompanionTabs:
    """Add the companion tabs and keys to ``window``'s reader."""
    tabs = install_reader(window.reader)
    for job in (tabs.xray.feed.job, tabs.recap.feed.job, tabs.cards.feed.job):
        if job is not None:  # each tab has its model bar
            job.app = window.app
            job.tasks = window.tasks
    recap = tabs.recap
    recap.days = lambda: int(getattr(window.app.settings, "previously_after_days", 3))

    def welcome_back() -> None:
        window.panes.set_side_visible(True)
        window.reader.side.setCurrentWidget(recap)

    recap.requestShown.connect(welcome_back)
    starters = getattr(window.chat, "starters", None)
    if starters is not None:  # without a model the chat's starters open these tabs

        def show_tab(name: str) -> None:
            window.panes.set_side_visible(True)
            window.reader.side.show_panel(name)

        starters.requestPanel.connect(show_tab)
    return tabs


def _follow[R](events: Events, feed: CompanionFeed[R]) -> None:
    """A companion tab follows the book: told when it opens and of every page shown."""
    events.subscribe(BookOpened, lambda e: feed.book_opened(e.book_id))
    events.subscribe(PageShown, lambda e: feed.page_shown(e.book_id, e.page))


def _register[R](reader: Reader, name: str, panel: QWidget, feed: CompanionFeed[R]) -> None:
    """One companion tab in the reader's side panel, following the book."""
    reader.side.add_panel(name, panel)
    _follow(reader.events, feed)
    feed.requestPlace.connect(lambda page, mark: reader.go_to_page(page, mark=mark))
    feed.requestFocusBook.connect(reader.focus_book)


def install_reader(reader: Reader) -> CompanionTabs:
    from desktop.companions.cards_panel import CardsPanel
    from desktop.companions.recap_panel import RecapPanel
    from desktop.companions.xray_panel import XRayPanel

    xray = XRayPanel(reader.library)
    recap = RecapPanel(reader.library)
    cards = CardsPanel(reader.library)
    events = reader.events
    refresh_cards = cards.feed.refresh
    events.subscribe(HighlightsChanged, lambda _e: refresh_cards() if cards.isVisible() else None)
    _register(reader, "X-Ray", xray, xray.feed)
    _register(reader, "Story so far", recap, recap.feed)
    _register(reader, "Cards", cards, cards.feed)

    def who_is() -> bool:
        selection = reader.selection()
        if selection is None or reader.book is None:
            return False
        reader.selection_bar.hide()
        reader.side.show()
        reader.side.setCurrentWidget(xray)
        return xray.who_is(selection[1])

    button = tool_button("Who is this?")
    button.setAccessibleName("Who is this?")
    button.setToolTip(f"Show the selected name in the X-Ray ({WHO_IS_KEY})")
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    button.clicked.connect(who_is)
    reader.selection_bar.add_button("whois", button, before="highlight")
    action = QAction("Who is this?", reader)
    action.setShortcut(QKeySequence(WHO_IS_KEY))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(who_is)
    reader.addAction(action)
    return CompanionTabs(xray, recap, cards, who_is, action)
