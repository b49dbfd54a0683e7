"""What the companion tabs (X-Ray, the story so far) share: they follow the open book and
its bound, read what is stored on a worker thread, make what is missing on a worker thread
too, and show it; links in their text (``page:N?mark=words``) jump in the book and mark.

A tab is told of the book (``book_opened``) and of every page change (``page_shown``); it
reloads when the bound it showed is no longer the book's (a second later, and only when it
is on screen, or as soon as it is shown again)."""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, urlparse

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from core.store.library import Library
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


class CompanionPanel[R](QWidget):
    """Base of a companion tab. Subclasses give ``load`` (blocking, on a worker: stored or
    made) and ``show_result`` (on the UI thread), of one kind of result ``R``."""

    requestPlace = Signal(int, str)  # page, words to mark there
    requestFocusBook = Signal()

    title = ""

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.book_id: int | None = None
        self.bound = 0  # the bound of what is shown
        self.busy = False
        self._again = False
        self.job: ModelJobBar | None = None  # when the tab has one
        self.status = QLabel()
        self.status.setWordWrap(True)
        # named by its own text ("17 chapters read…", "1 due of 1"), not by a fixed name
        self.status.setAccessibleDescription(f"{self.title} status")
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(4, 4, 4, 4)
        self._check = QTimer(self)
        self._check.setSingleShot(True)
        self._check.setInterval(1000)
        self._check.timeout.connect(self.refresh)

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

    def add_job(self, label: str, **what: bool) -> None:
        """A bar that writes this tab's notes or summaries with the model."""
        from desktop.companions.model_job import ModelJobBar

        self.job = job = ModelJobBar(label, what)
        job.finished.connect(self.refresh)
        self.layout_.addWidget(job)

    def book_opened(self, book_id: int) -> None:
        self.book_id = book_id
        if self.job is not None:
            self.job.book_id = book_id
        self.bound = 0
        self.clear()
        if self.isVisible():
            self.refresh()

    def page_shown(self, book_id: int, page: int) -> None:
        if book_id == self.book_id and self.isVisible():
            self._check.start()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.repaint_content()  # links take the new theme's colour when drawn again

    def repaint_content(self) -> None:
        """Draw the shown text again (a theme change)."""

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        """Read (or make) what the book's bound needs, on a worker; show it when it comes."""
        if self.book_id is None:
            return
        if self.busy:
            self._again = True
            return
        self.busy = True
        book_id = self.book_id
        in_background(
            self.load, book_id, then=lambda r: self._loaded(book_id, r), failed=self._failed
        )

    def _loaded(self, book_id: int, result: R | None) -> None:
        if not shiboken6.isValid(self):
            return  # the window closed meanwhile
        self.busy = False
        if book_id == self.book_id and result is not None:
            self.show_result(result)
        if self._again:
            self._again = False
            self.refresh()

    def _failed(self, exc: Exception) -> None:
        if not shiboken6.isValid(self):
            return
        self.busy = False
        log.warning("%s could not be made", self.title, exc_info=exc)
        message = getattr(exc, "message", "") or "Something went wrong; the log has the details."
        self.status.setText(f"{self.title} is not available: {message}")

    # for subclasses ---------------------------------------------------------------------

    def load(self, book_id: int) -> R | None:
        raise NotImplementedError

    def show_result(self, result: R) -> None:
        raise NotImplementedError

    def clear(self) -> None:
        self.status.setText("")
