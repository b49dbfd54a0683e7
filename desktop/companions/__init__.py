"""The companions in the window (issue 25): the X-Ray and the story-so-far tabs of the
reader's side panel, "Who is this?" on the selection bar (Ctrl+Shift+X), and the chat's
starters. ``install(window)`` adds them once the reading view is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout

from desktop.events import BookOpened, Events, HighlightsChanged, PageShown
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from desktop.companions.panel import CompanionPanel
    from desktop.reader.reader import Reader

WHO_IS_KEY = "Ctrl+Shift+X"


def install(window: Any) -> dict[str, Any]:
    """Add the companion tabs and keys to ``window``'s reader."""
    parts = install_reader(window.reader)
    for name in ("xray", "recap", "cards"):
        parts[name].job.app = window.app
        parts[name].job.tasks = getattr(window, "tasks", None)
    recap = parts["recap"]
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
    return parts


def _follow(events: Events, panel: CompanionPanel) -> None:
    """A companion tab follows the book: told when it opens and of every page shown."""
    events.subscribe(BookOpened, lambda e: panel.book_opened(e.book_id))
    events.subscribe(PageShown, lambda e: panel.page_shown(e.book_id, e.page))


def install_reader(reader: Reader) -> dict[str, Any]:
    from desktop.companions.cards_panel import CardsPanel
    from desktop.companions.recap_panel import RecapPanel
    from desktop.companions.xray_panel import XRayPanel

    xray = XRayPanel(reader.library)
    recap = RecapPanel(reader.library)
    cards = CardsPanel(reader.library)
    events = reader.events
    events.subscribe(HighlightsChanged, lambda _e: cards.refresh() if cards.isVisible() else None)
    for name, panel in (("X-Ray", xray), ("Story so far", recap), ("Cards", cards)):
        reader.side.add_panel(name, panel)
        _follow(events, panel)
        panel.requestPlace.connect(lambda page, mark: reader.go_to_page(page, mark=mark))
        panel.requestFocusBook.connect(reader._focus_book)

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
    bar = reader.selection_bar
    layout = bar.layout()
    assert isinstance(layout, QHBoxLayout)
    layout.insertWidget(layout.indexOf(bar.buttons["highlight"]), button)
    bar.buttons["whois"] = button
    action = QAction("Who is this?", reader)
    action.setShortcut(QKeySequence(WHO_IS_KEY))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(who_is)
    reader.addAction(action)
    return {"xray": xray, "recap": recap, "cards": cards, "who_is": who_is, "action": action}
