"""What the companion tabs (X-Ray, the story so far, cards) share, as a part each owns
(``tab.feed``, a ``CompanionFeed``; the tabs are plain widgets): they follow the open book and
its bound, read what is stored on a worker thread, make what is missing on a worker thread
too, and show it; links in their text (``page:N?mark=words``) jump in the book and mark.

A tab is told of the book (``book_opened``) and of every page change (``page_shown``); it
reloads when the bound it showed is no longer the book's (a second later, and only when it
is on screen, or as soon as it is shown again)."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, urlparse

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from desktop.reader.readable_text import ReadableBrowser
from desktop.tasks import in_background

if TYPE_CHECKING:
    from desktop.companions.model_job import ModelJobBar

log = logging.getLogger(__name__)


def page_link(page: int, mark: str = "", text: str = "") -> str:
    """An HTML link that opens ``page`` and marks ``mark`` there."""
    href = f"page:{page}" + (f"?mark={quote(mark)}" if mark else "")
    return f'<a href="{href}">{html.escape(text or f"p. {page}")}</a>'


def parse_page_link(url: QUrl) -> tuple[int, str] | None:
    parsed = urlparse(url.toString())
    if parsed.scheme != "page" or not parsed.path.isdigit():
        return None
    mark = parse_qs(parsed.query).get("mark", [""])[0]
    return int(parsed.path), mark


def tab_layout(tab: QWidget) -> QVBoxLayout:
    """The column a companion tab lays its parts in."""
    layout = QVBoxLayout(tab)
    layout.setContentsMargins(4, 4, 4, 4)
    return layout


class CompanionFeed[R](QObject):
    """What every companion tab does, as a part the tab owns (``tab.feed``): it follows the
    book, reads (or makes) the tab's result of kind ``R`` on a worker with ``load``, and gives
    it to ``show`` on the UI thread. The tab stays a plain ``QWidget``."""

    requestPlace = Signal(int, str)  # page, words to mark there
    requestFocusBook = Signal()

    def __init__(
        self,
        tab: QWidget,
        title: str,
        load: Callable[[int], R | None],
        show: Callable[[R], None],
        clear: Callable[[], None],
        *,
        opening: Callable[[int], None] | None = None,
        refreshing: Callable[[], None] | None = None,
        repaint: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(tab)
        self.tab, self.title = tab, title
        self._load, self._show, self._clear = load, show, clear
        self._opening, self._refreshing, self._repaint = opening, refreshing, repaint
        self.book_id: int | None = None
        self.bound = 0  # the bound of what is shown
        self.busy = False
        self._again = False
        self.job: ModelJobBar | None = None  # when the tab has one
        self.status = QLabel()
        self.status.setWordWrap(True)
        # named by its own text ("17 chapters read…", "1 due of 1"), not by a fixed name
        self.status.setAccessibleDescription(f"{title} status")
        self._check = QTimer(self)
        self._check.setSingleShot(True)
        self._check.setInterval(1000)
        self._check.timeout.connect(self.refresh)
        tab.installEventFilter(self)  # shown: refresh; a theme change: drawn again

    def browser(self, name: str, *, keyboard_links: bool = True) -> QTextBrowser:
        """A text the tab shows, read by a screen reader as a text (its lines, from the
        caret), not as a label with only its name. Without ``keyboard_links`` its links are
        for the mouse only: Tab leaves it at once (the tab offers them in one stop)."""
        view = ReadableBrowser()
        if not keyboard_links:
            view.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse
                | Qt.TextInteractionFlag.TextSelectableByKeyboard
                | Qt.TextInteractionFlag.LinksAccessibleByMouse
            )
        view.setOpenLinks(False)
        view.setAccessibleName(name)
        view.anchorClicked.connect(self.link)
        return view

    def link(self, url: QUrl) -> None:
        place = parse_page_link(url)
        if place is not None:
            self.requestPlace.emit(*place)
            self.requestFocusBook.emit()

    # following the book -----------------------------------------------------------------

    def add_job(self, layout: QVBoxLayout, label: str, **what: bool) -> ModelJobBar:
        """A bar that writes this tab's notes or summaries with the model."""
        from desktop.companions.model_job import ModelJobBar

        self.job = job = ModelJobBar(label, what)
        job.finished.connect(self.refresh)
        layout.addWidget(job)
        return job

    def book_opened(self, book_id: int) -> None:
        if self._opening is not None:
            self._opening(book_id)
        self.book_id = book_id
        if self.job is not None:
            self.job.book_id = book_id
        self.bound = 0
        self.status.setText("")
        self._clear()
        if self.tab.isVisible():
            self.refresh()

    def page_shown(self, book_id: int, page: int) -> None:
        if book_id == self.book_id and self.tab.isVisible():
            self._check.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type() if watched is self.tab else None
        if kind == QEvent.Type.Show:
            self.refresh()
        elif kind == QEvent.Type.PaletteChange and self._repaint is not None:
            self._repaint()  # links take the new theme's colour when drawn again
        return False

    def refresh(self) -> None:
        """Read (or make) what the book's bound needs, on a worker; show it when it comes."""
        if self._refreshing is not None:
            self._refreshing()
        if self.book_id is None:
            return
        if self.busy:
            self._again = True
            return
        self.busy = True
        book_id = self.book_id
        in_background(
            self._load, book_id, then=lambda r: self._loaded(book_id, r), failed=self._failed
        )

    def _loaded(self, book_id: int, result: R | None) -> None:
        if not shiboken6.isValid(self.tab):
            return  # the window closed meanwhile
        self.busy = False
        if book_id == self.book_id and result is not None:
            self._show(result)
        if self._again:
            self._again = False
            self.refresh()

    def _failed(self, exc: Exception) -> None:
        if not shiboken6.isValid(self.tab):
            return
        self.busy = False
        log.warning("%s could not be made", self.title, exc_info=exc)
        message = getattr(exc, "message", "") or "Something went wrong; the log has the details."
        self.status.setText(f"{self.title} is not available: {message}")
