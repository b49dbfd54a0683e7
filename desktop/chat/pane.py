"""The chat pane: conversations about the open book, streaming answers with page chips,
Stop, Retry, Regenerate, Copy, the selection card and the quick actions.

All agent logic is in ``core``: the pane iterates ``AgentService.ask`` on the qasync loop and
renders the events. Text is buffered and repainted on a 50 ms timer (20 times a second), never
per delta. Each running answer is a task keyed by its conversation, so switching book or
conversation never loses it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

import shiboken6
from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.agent.answer import AnswerState
from core.agent.events import TextDelta
from core.app import Margin
from core.errors import MarginError
from desktop.chat.render import CSS, answer_html, question_html
from desktop.requests import AskRequest, OpenPageRequest
from desktop.tasks import TaskKeeper
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from core.agent.service import AgentService

log = logging.getLogger("margin.chat")
REPAINT_MS = 50


class QuestionBox(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class Transcript(QTextBrowser):
    """Never loads anything: no remote images from an answer's Markdown."""

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        return QByteArray()


@dataclass
class LiveRun:
    conversation_id: int
    question: str
    selection_text: str | None
    selection_page: int | None
    view: AnswerState
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None
    first_text_at: float | None = None


class ChatPane(QWidget):
    requestOpenPage = Signal(object)  # OpenPageRequest
    requestSettings = Signal()
    answerRendered = Signal(int)  # conversation id; for tests and benchmarks

    def __init__(self, app: Margin, tasks: TaskKeeper, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Chat")
        self.app = app
        self.library = app.library
        self.paths = app.paths
        self.tasks = tasks
        self.book_id: int | None = None
        self.conversation_id: int | None = None
        self.live: dict[int, LiveRun] = {}
        self.expanded: set[str] = set()
        self.selection: AskRequest | None = None
        self._views: dict[str, AnswerState] = {}
        self._dirty = False
        # header: conversations
        self.conversations = QComboBox()
        self.conversations.setAccessibleName("Conversations")
        self.conversations.currentIndexChanged.connect(self._conversation_chosen)
        self.new_button = tool_button("New")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.clicked.connect(self.new_conversation)
        self.rename_button = tool_button("Rename")
        self.rename_button.setAccessibleName("Rename conversation")
        self.rename_button.clicked.connect(self.rename_conversation)
        self.delete_button = tool_button("Delete")
        self.delete_button.setAccessibleName("Delete conversation")
        self.delete_button.clicked.connect(self.delete_conversation)
        header = QHBoxLayout()
        header.addWidget(self.conversations, 1)
        for b in (self.new_button, self.rename_button, self.delete_button):
            header.addWidget(b)
        # banner for passages mode
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        self.banner.setStyleSheet("#banner { background: #fff4d6; border: 1px solid #e8d08a; }")
        banner_text = QLabel("No AI model is connected: answers are passages from the book.")
        banner_text.setWordWrap(True)
        self.connect_button = QPushButton("Connect a model…")
        self.connect_button.setAccessibleName("Connect a model")
        self.connect_button.clicked.connect(self.requestSettings)
        bl = QHBoxLayout(self.banner)
        bl.addWidget(banner_text, 1)
        bl.addWidget(self.connect_button)
        # transcript
        self.transcript = Transcript()
        self.transcript.setAccessibleName("Conversation")
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        self.transcript.document().setDefaultStyleSheet(CSS)
        self.status = QLabel("")
        self.status.setAccessibleName("Assistant activity")
        self.status.setWordWrap(True)
        # selection card
        self.card = QFrame()
        self.card.setObjectName("card")
        self.card.setStyleSheet("#card { border-left: 3px solid #c9a227; background: #fbf7ea; }")
        self.card_text = QLabel()
        self.card_text.setWordWrap(True)
        self.card_text.setAccessibleName("Selected passage")
        card_close = tool_button("✕")
        card_close.setAccessibleName("Remove the selected passage")
        card_close.clicked.connect(self.clear_selection)
        cl = QHBoxLayout(self.card)
        cl.addWidget(self.card_text, 1)
        cl.addWidget(card_close, 0, Qt.AlignmentFlag.AlignTop)
        self.card.hide()
        # input
        self.input = QuestionBox()
        self.input.setPlaceholderText(
            "Ask about this book… (Enter sends, Shift+Enter for a new line)"
        )
        self.input.setAccessibleName("Question")
        self.input.setMaximumHeight(110)
        self.input.submitted.connect(self.send)
        self.send_button = QPushButton("Send")
        self.send_button.setAccessibleName("Send question")
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop the answer")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.hide()
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.banner)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.card)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        self._timer = QTimer(self)
        self._timer.setInterval(REPAINT_MS)
        self._timer.timeout.connect(self._tick)
        self._timer.start()
        self._update_banner()
        self.set_book(None)

    # service ---------------------------------------------------------------------------

    @property
    def service(self) -> AgentService:
        return cast("AgentService", self.app.agent)

    def settings_changed(self) -> None:
        try:
            self.app.reload_settings()
        except MarginError as exc:
            self.status.setText(str(exc))
        self._update_banner()

    def _update_banner(self) -> None:
        try:
            mode = self.service.mode()
        except MarginError as exc:
            self.status.setText(str(exc))
            mode = "passages"
        self.banner.setVisible(mode == "passages")

    def recover(self) -> None:
        count = self.service.recover_interrupted()
        if count:
            log.info("marked %d interrupted answers", count)

    async def warm_up(self) -> None:
        """Import the model SDK in a thread now, so the first question does not wait."""
        if self.service.mode() != "passages":
            from core.agent.providers.anthropic import load_sdk

            await load_sdk()

    # books and conversations -------------------------------------------------------------

    def set_book(self, book_id: int | None) -> None:
        book_id = book_id or None
        if book_id == self.book_id and book_id is not None:
            return
        self.book_id = book_id
        self.clear_selection()
        enabled = book_id is not None
        for w in (
            self.conversations,
            self.new_button,
            self.rename_button,
            self.delete_button,
            self.input,
            self.send_button,
        ):
            w.setEnabled(enabled)
        self._reload_conversations()

    def _reload_conversations(self, select: int | None = None) -> None:
        self.conversations.blockSignals(True)
        self.conversations.clear()
        items = self.service.list_conversations(self.book_id) if self.book_id else []
        for conv in items:
            running = " ●" if conv.id in self.live else ""
            self.conversations.addItem(f"{conv.title}{running}", conv.id)
        self.conversations.blockSignals(False)
        target = select if select is not None else (items[0].id if items else None)
        if target is not None:
            index = self.conversations.findData(target)
            self.conversations.setCurrentIndex(max(0, index))
        self.conversation_id = target
        self.redraw()

    def _conversation_chosen(self, index: int) -> None:
        data = self.conversations.itemData(index)
        self.conversation_id = int(data) if data is not None else None
        self.redraw()

    def new_conversation(self) -> None:
        if self.book_id is None:
            return
        conv = self.service.create_conversation(self.book_id)
        self._reload_conversations(select=conv.id)
        self.focus_input()

    def rename_conversation(self) -> None:
        if self.conversation_id is None:
            return
        current = self.service.get_conversation(self.conversation_id).title
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:", text=current)
        if ok and title.strip():
            self.service.rename_conversation(self.conversation_id, title)
            self._reload_conversations(select=self.conversation_id)

    def delete_conversation(self) -> None:
        if self.conversation_id is None:
            return
        answer = QMessageBox.question(
            self, "Delete conversation", "Delete this conversation? This cannot be undone."
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        live = self.live.get(self.conversation_id)
        if live is not None:
            live.stop.set()
        self.service.delete_conversation(self.conversation_id)
        self._reload_conversations()

    # asking ---------------------------------------------------------------------------------

    def focus_input(self) -> None:
        self.input.setFocus()

    def handle_ask(self, request: AskRequest) -> None:
        """A selection from the reader: "ask" waits for the question; the rest send at once."""
        if request.book_id != self.book_id:
            self.set_book(request.book_id)
        self.selection = request
        short = request.text if len(request.text) < 400 else request.text[:397] + "…"
        self.card_text.setText(f"“{short}” — p. {request.page}")
        self.card.show()
        if request.action == "ask" or not request.prompt:
            self.focus_input()
            return
        self.ask(request.prompt, request)

    def clear_selection(self) -> None:
        self.selection = None
        self.card.hide()

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.book_id is None:
            return
        self.input.clear()
        self.ask(text, self.selection)

    def ask(
        self, text: str, selection: AskRequest | None = None, *, regenerate: bool = False
    ) -> int | None:
        """Start an answer in the current conversation (creating one when needed)."""
        from core.agent.types import Selection

        if self.book_id is None:
            return None
        if self.conversation_id is None:
            conv = self.service.create_conversation(self.book_id)
            self._reload_conversations(select=conv.id)
        conversation_id = self.conversation_id
        assert conversation_id is not None
        if conversation_id in self.live:
            self.status.setText(
                "An answer is still being written in this conversation; stop it or start a new conversation."
            )
            self.input.setPlainText(text)
            return None
        sel = Selection(selection.text, selection.page) if selection is not None else None
        if regenerate:
            last = self.service.last_question(conversation_id)
            if last is None:
                return None
            text = last.text
            sel = last.selection
        live = LiveRun(
            conversation_id,
            text,
            sel.text if sel else None,
            sel.page if sel else None,
            AnswerState(key=f"live-{conversation_id}", status="running", retry_text=text),
        )
        self.live[conversation_id] = live
        self.clear_selection()
        if regenerate:
            events = self.service.regenerate(conversation_id, stop=live.stop)
        else:
            events = self.service.ask(conversation_id, text, selection=sel, stop=live.stop)
        live.task = self.tasks.start(self._consume(live, events), key=f"chat:{conversation_id}")
        self._running_changed()
        self.redraw()
        return conversation_id

    async def _consume(self, live: LiveRun, events: Any) -> None:
        view = live.view
        try:
            async for event in events:
                if isinstance(event, TextDelta) and live.first_text_at is None:
                    import time

                    live.first_text_at = time.perf_counter()
                    view.apply(event)
                    self._dirty = True
                    self._tick()  # the first words show at once
                    continue
                view.apply(event)
                self._dirty = True
        except MarginError as exc:
            # nothing was persisted (for example the conversation was deleted): keep the text
            view.status = "failed"
            view.error = None
            self.status.setText(str(exc))
            if not self.input.toPlainText().strip():
                self.input.setPlainText(live.question)
        finally:
            self.live.pop(live.conversation_id, None)
            if shiboken6.isValid(self) and shiboken6.isValid(
                self.stop_button
            ):  # the window may be gone
                self._running_changed()
                if (
                    self.book_id is not None
                    and self.conversations.findData(live.conversation_id) >= 0
                ):
                    self._reload_conversations(
                        select=self.conversation_id
                    )  # titles come from the first question
                elif live.conversation_id == self.conversation_id:
                    self.redraw()
                self.answerRendered.emit(live.conversation_id)

    def stop(self) -> None:
        if self.conversation_id is not None and self.conversation_id in self.live:
            self.live[self.conversation_id].stop.set()
            self.status.setText("Stopping…")

    def _running_changed(self) -> None:
        running = self.conversation_id in self.live
        self.stop_button.setVisible(running)
        self.send_button.setEnabled(not running and self.book_id is not None)
        if not running:
            self.status.setText("")

    def hideEvent(self, event: Any) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def showEvent(self, event: Any) -> None:
        self._timer.start()
        super().showEvent(event)

    async def shutdown(self) -> None:
        self._timer.stop()
        runs = list(self.live.values())
        for live in runs:
            live.stop.set()
        tasks = [r.task for r in runs if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=3.0)

    # rendering --------------------------------------------------------------------------------

    def _tick(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        live = self.live.get(self.conversation_id) if self.conversation_id is not None else None
        if live is not None:
            self.status.setText(live.view.activity)
            self.redraw()
            self.answerRendered.emit(live.conversation_id)

    def redraw(self) -> None:
        self._running_changed()
        if self.conversation_id is None:
            self.transcript.setHtml(
                "<p style='color:#777'>Ask a question about this book. Select text in the book to ask about a passage.</p>"
                if self.book_id
                else "<p style='color:#777'>Open a book to talk about it.</p>"
            )
            return
        bar = self.transcript.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        parts: list[str] = []
        self._views = {}
        try:
            history = self.service.history(self.conversation_id)
        except MarginError:  # deleted elsewhere (another window, the CLI)
            self.conversation_id = None
            self._reload_conversations()
            return
        live = self.live.get(self.conversation_id)
        answers = [r for r in history if r.role == "assistant"]
        last_answer = answers[-1] if answers else None
        for record in history:
            if live is not None and record.run_id == live.view.run_id:
                continue  # the live view shows this run
            if record.role == "user":
                parts.append(
                    question_html(record.text, record.selection_text, record.selection_page)
                )
            else:
                view = AnswerState(
                    key=str(record.id),
                    text=record.text,
                    status=record.status,
                    citations=list(record.citations),
                    tool_calls=list(record.tool_calls),
                    passages=list(record.passages),
                    usage=record.usage,
                    error=record.error,
                    run_id=record.run_id,
                )
                view.retry_text = _question_for(history, record)
                self._views[view.key] = view
                parts.append(
                    answer_html(
                        view, expanded=self.expanded, last=record is last_answer and live is None
                    )
                )
        if live is not None:
            parts.append(question_html(live.question, live.selection_text, live.selection_page))
            self._views[live.view.key] = live.view
            parts.append(answer_html(live.view, expanded=self.expanded, last=False))
        self.transcript.setHtml("".join(parts))
        if at_bottom or live is not None:
            bar.setValue(bar.maximum())

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    # links --------------------------------------------------------------------------------

    def _link(self, url: QUrl) -> None:
        scheme = url.scheme()
        if scheme == "margin-cite":
            path = url.path()
            try:
                book_s, pages = path.split("/", 1)
                first = int(pages.split("-")[0])
            except ValueError:
                return
            quote = unquote(url.query().removeprefix("q="))
            self.requestOpenPage.emit(OpenPageRequest(int(book_s), first, quote))
            return
        if scheme != "margin-action":
            return
        action, _, arg = url.path().partition("/")
        if action == "settings":
            self.requestSettings.emit()
        elif action == "copy" and arg in self._views:
            QGuiApplication.clipboard().setText(self._views[arg].text)
            self.status.setText("Answer copied.")
        elif action == "regenerate" and self.conversation_id is not None:
            self.ask("", regenerate=True)
        elif action == "retry" and arg in self._views:
            self.retry(arg)
        elif action in ("sources", "trace"):
            key = ("s" if action == "sources" else "t") + arg
            self.expanded.symmetric_difference_update({key})
            self.redraw()

    def retry(self, key: str) -> None:
        """Ask a failed question again: the last one is replaced, an older one is re-asked."""
        view = self._views.get(key)
        if view is None or self.conversation_id is None:
            return
        history = self.service.history(self.conversation_id)
        last_run = next((r.run_id for r in reversed(history) if r.run_id), None)
        if view.run_id is not None and view.run_id == last_run:
            self.ask(view.retry_text, regenerate=True)
        elif view.retry_text:
            self.ask(view.retry_text)


def _question_for(history: list[Any], answer: Any) -> str:
    for record in history:
        if record.role == "user" and record.run_id == answer.run_id:
            return str(record.text)
    return ""
