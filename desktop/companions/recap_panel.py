"""The "Story so far" tab: a summary of each chapter the reader has finished (its most
central sentences, with their pages, or a model's summary when one was made), and where the
reader is in the chapter being read. "Previously…" heads it when the reader comes back to a
book after some days."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from core.companions import recap
from core.store.library import Library
from desktop.companions.panel import CompanionFeed, page_link, tab_layout
from desktop.tasks import in_background

log = logging.getLogger(__name__)


class RecapPanel(QWidget):
    title = "Story so far"
    requestShown = Signal()  # "Previously…" is ready: bring the tab to the front

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.feed: CompanionFeed[recap.Recap] = CompanionFeed(
            self,
            self.title,
            self.load,
            self.show_result,
            self.clear,
            opening=self._opening,
            repaint=self.repaint_content,
        )
        self.layout_ = tab_layout(self)
        self.made: recap.Recap | None = None
        self.previously = ""  # set when the reader comes back after some days
        self.days: Callable[[], int] = lambda: 3  # the setting (previously_after_days)
        self.view = self.feed.browser("The story so far")
        self.layout_.addWidget(self.feed.status)
        self.layout_.addWidget(self.view, 1)
        self.feed.add_job(self.layout_, "Model recap…", recap=True, notes=False)
        if self.feed.job is not None:  # a short label fits a narrow panel
            self.feed.job.setToolTip("Chapter summaries written by the model")

    def load(self, book_id: int) -> recap.Recap:
        db = self.library.db
        return recap.stored(db, book_id) or recap.recap(db, book_id)

    def clear(self) -> None:
        self.feed.status.setText("")
        self.made = None
        self.view.clear()

    def _opening(self, book_id: int) -> None:
        """A book opens: "Previously…" when the reader comes back to it after some days."""
        self.previously = ""
        days = self.days()
        in_background(
            self._returning,
            book_id,
            days,
            then=lambda text: self._welcome(book_id, text),
            failed=lambda exc: log.info("no Previously… for book %s: %s", book_id, exc),
        )

    def _returning(self, book_id: int, days: int) -> str:
        """On a worker: "Previously…" when the reader was away ``days`` days or more."""
        db = self.library.db
        if not recap.returning(db, book_id, days):
            return ""
        made = recap.stored(db, book_id) or recap.recap(db, book_id)
        return recap.previously(made)

    def _welcome(self, book_id: int, text: str) -> None:
        if not text or book_id != self.feed.book_id or not shiboken6.isValid(self):
            return
        self.show_previously(text)
        self.requestShown.emit()

    def repaint_content(self) -> None:
        if self.made is not None:
            self.show_result(self.made)

    def show_previously(self, text: str) -> None:
        self.previously = text
        if self.made is not None:
            self.show_result(self.made)

    def show_result(self, result: recap.Recap) -> None:
        made: recap.Recap = result
        self.made = made
        self.feed.bound = made.read_to
        read = [c for c in made.chapters if c.state == "read"]
        if not made.chapters:
            self.feed.status.setText(
                f"Nothing to recap yet in pages 1–{made.read_to}. Each chapter is summarised "
                "here when you finish it."
            )
            self.view.clear()
            return
        self.feed.status.setText(
            f"{len(read)} chapter{'s' if len(read) != 1 else ''} read, pages 1–{made.read_to}."
        )
        self.view.setHtml(recap_html(made, self.previously))


def recap_html(made: recap.Recap, previously: str = "") -> str:
    parts: list[str] = []
    if previously:
        body = "".join(f"<p>{html.escape(p)}</p>" for p in previously.split("\n\n"))
        parts.append(f"<h3>Previously…</h3>{body}<hr>")
    for c in made.chapters:
        pages = f"pp. {c.chapter.first}–{c.chapter.last}"
        parts.append(
            f"<h4>{html.escape(c.chapter.title)} "
            f"<small>({page_link(c.chapter.first, '', pages)})</small></h4>"
        )
        if c.state == "current":
            parts.append(
                f"<p><i>You are here: read to p. {c.read_to} of this chapter's "
                f"{c.chapter.first}–{c.chapter.last}. It is summarised when you finish it."
                "</i></p>"
            )
            continue
        if c.text:
            parts.append(f"<p>{html.escape(c.text)}</p>")
            continue
        items = "".join(
            f"<li>{html.escape(s)} ({page_link(p, s[:80])})</li>" for p, s in c.sentences
        )
        parts.append(f"<ul>{items}</ul>")
    return "".join(parts)
