"""The bar under a companion tab that writes its notes or summaries with the connected model:
it says what the job costs before it starts ("About 45,000 tokens, ~$0.05"), refuses past the
book's budget, runs in the background with progress, and Stop ends it (what is done is kept).
Each call is written to the book's companions event log; "Show trace" lists them.

The plan (reading the book) runs on a worker; the calls stream on the window's event loop,
as the chat's answers do."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.progress import CancelToken
from desktop.tasks import run_blocking

if TYPE_CHECKING:
    from core.agent.spoiler_index import SpoilerIndex
    from core.app import Margin
    from desktop.tasks import TaskKeeper

log = logging.getLogger(__name__)


class ModelJobBar(QWidget):
    finished = Signal()  # the job ended (done, stopped or failed): the tab reloads
    messaged = Signal(str)  # a sentence for the reader (the tab shows it)

    def __init__(self, label: str, what: dict[str, bool], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from core.companions.trace import kinds_of
        from desktop.companions.trace_view import TraceView

        self.what = what
        self.app: Margin | None = None
        self.tasks: TaskKeeper | None = None  # the window's
        self.trace = TraceView(kinds_of(what), self._events)
        self._book_id: int | None = None
        self.task: asyncio.Task[None] | None = None
        self.cancel = CancelToken()
        self.confirm: Callable[[str], bool] = self._ask
        self.start_button = QPushButton(label)
        self.start_button.setToolTip("Uses the connected model; says what it costs first")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setAccessibleName(f"{label} progress")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.hide()
        row = QHBoxLayout()
        row.addWidget(self.start_button)
        row.addWidget(self.progress, 1)
        row.addWidget(self.stop_button)
        row.addWidget(self.trace.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.trace)
        self.finished.connect(self.trace.job_ended)
        self._idle()

    @property
    def book_id(self) -> int | None:
        return self._book_id

    @book_id.setter
    def book_id(self, book_id: int | None) -> None:
        if book_id != self._book_id:
            self.trace.set_book(book_id)
        self._book_id = book_id

    def _events(self) -> Path | None:
        """The event logs' folder, where each call of a job is written."""
        return Path(self.app.paths.event_logs) if self.app is not None else None

    def _idle(self) -> None:
        self.progress.hide()
        self.stop_button.hide()
        self.start_button.show()

    def _ask(self, text: str) -> bool:
        answer = QMessageBox.question(self, "Write with the model", text)
        return answer == QMessageBox.StandardButton.Yes

    def start(self) -> None:
        if self.task is not None and not self.task.done():
            return
        if self.app is None or self.book_id is None:
            return
        coro = self._run(self.book_id)
        # the window's tasks: closing the window stops the job (what is done is kept)
        self.task = (
            self.tasks.start(coro) if self.tasks is not None else asyncio.ensure_future(coro)
        )

    def stop(self) -> None:
        self.cancel.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def _run(self, book_id: int) -> None:
        from core.companions import model

        app = self.app
        assert app is not None  # (start() runs a job only with the app set)
        self.cancel = CancelToken()
        self.message("")
        self.start_button.setEnabled(False)
        try:
            if app.mode() == "passages":
                self.message(
                    "No model is connected: what you see is made from the book alone. "
                    "Connect one in Settings to have notes and summaries written."
                )
                return
            provider = app.agent.provider()
            db = app.library.db

            def plan_and_spent() -> tuple[model.Plan, float, SpoilerIndex]:
                job = model.plan(db, book_id, provider.model, **self.what)
                _u, chat_cost, _n = app.conversations.book_usage(book_id)
                _u2, companion_cost = model.spent(db, book_id)
                index = app.agent.spoilers.get(db, book_id)
                return job, (chat_cost or 0.0) + (companion_cost or 0.0), index

            job, already, index = await run_blocking(plan_and_spent)
            if not job.calls:
                self.message("Everything here is already written.")
                return
            model.check_budget(job, app.settings.budget_per_book_usd, already)
            if not self.confirm(f"{len(job.calls)} calls to {provider.model}: {job.describe()}."):
                return
            self.start_button.hide()
            self.progress.setRange(0, len(job.calls))
            self.progress.setValue(0)
            self.progress.show()
            self.stop_button.show()

            def progress(done: int, total: int, title: str) -> None:
                self.progress.setValue(done)
                self.progress.setFormat(f"{done}/{total} {title}")

            used = await model.run(
                db,
                book_id,
                job,
                provider,
                index,
                progress=progress,
                cancel=self.cancel,
                events=self._events(),
            )
            self.message(f"Used {used.input_tokens + used.output_tokens:,} tokens.")
        except asyncio.CancelledError:
            self.message("Stopped; what was written is kept.")
        except MarginError as exc:
            self.message(str(exc))
        except Exception as exc:  # the reader gets a sentence, the log the traceback
            log.exception("a companion job failed")
            self.message(f"The job stopped: {exc.__class__.__name__}. The log has the details.")
        finally:
            if shiboken6.isValid(self):
                self.start_button.setEnabled(True)
                self._idle()
                self.finished.emit()

    def message(self, text: str) -> None:
        if not shiboken6.isValid(self):
            return  # the window closed while the job ran
        self.note.setText(text)
        self.note.setVisible(bool(text))
        self.messaged.emit(text)
