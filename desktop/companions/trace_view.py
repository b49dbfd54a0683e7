""" "Show trace" under a companion tab's model bar: each model call of the tab's last jobs on
this book, as the book's companions event log has them (``core.companions.trace``): what was
asked, tokens, stop reason, time and sentences withheld, with each job's status and cost.
The log is read on a worker; the list follows a job that ends while it is open."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtWidgets import QTextBrowser, QToolButton, QVBoxLayout, QWidget

from core.companions import trace
from desktop.tasks import in_background

log = logging.getLogger(__name__)
LAST_JOBS = 3


def trace_html(found: list[trace.Job]) -> str:
    if not found:
        return "<p>No model calls yet for this book.</p>"
    parts: list[str] = []
    for job in reversed(found):  # newest first
        rows = "".join(f"<li>{html.escape(c.line())}</li>" for c in job.calls)
        parts.append(
            f"<p><b>{html.escape(job.heading())}</b></p>"
            f"<ul>{rows or '<li>No call was made.</li>'}</ul>"
        )
    return "".join(parts)


class TraceView(QWidget):
    """The "Show trace" button (for the bar's row) and the list it opens."""

    def __init__(
        self,
        kinds: set[str],
        folder: Callable[[], Path | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.kinds = kinds
        self.folder = folder
        self.book_id: int | None = None
        self.jobs: list[trace.Job] | None = None  # what is shown (tests read it)
        self.button = QToolButton()
        self.button.setText("Show trace")
        self.button.setAccessibleName("Show trace")
        self.button.setToolTip("Each model call of the last jobs: tokens, stop reason, time")
        self.button.clicked.connect(self.toggle)
        self.view = QTextBrowser()
        self.view.setAccessibleName("Model calls")
        self.view.setMaximumHeight(200)
        self.view.document().setIndentWidth(14)  # the side panel is narrow
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.hide()

    def set_book(self, book_id: int | None) -> None:
        self.book_id = book_id
        self.close_list()

    def toggle(self) -> None:
        if self.isVisible():
            self.close_list()
        else:
            self.load()

    def close_list(self) -> None:
        self.hide()
        self.button.setText("Show trace")

    def job_ended(self) -> None:
        if self.isVisible():
            self.load()

    def load(self) -> None:
        folder = self.folder()
        book_id = self.book_id
        if folder is None or book_id is None:
            return
        in_background(
            trace.jobs,
            folder,
            book_id,
            self.kinds,
            LAST_JOBS,
            then=lambda found: self._show(book_id, found),
            failed=self._failed,
        )

    def _show(self, book_id: int, found: list[trace.Job]) -> None:
        if not shiboken6.isValid(self) or book_id != self.book_id:
            return
        self.jobs = found
        self.view.setHtml(trace_html(found))
        self.show()
        self.button.setText("Hide trace")

    def _failed(self, exc: Exception) -> None:
        if not shiboken6.isValid(self):
            return
        log.warning("the companions' trace could not be read", exc_info=exc)
        self.view.setHtml("<p>The trace could not be read; the log file has the details.</p>")
        self.show()
