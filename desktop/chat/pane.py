"""The chat pane: conversations about the open book, streaming answers with page chips,
Stop (Esc), Retry, Regenerate, Copy, the selection card, the quick actions, the per-question
spoiler choice, the cost meter and Markdown export.

All agent logic is in ``core``: the pane iterates ``AgentService.ask`` on the qasync loop and
folds the events into an ``AnswerState``. The transcript (``transcript.Transcript``) holds one
frame per message: finished messages are rendered once (cached by key) and the 50 ms timer
repaints only the live answer's frame. The history is read when the conversation changes or
an answer ends, never per tick. Each running answer is a task keyed by its conversation, so
switching book or conversation never loses it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.agent.answer import AnswerState
from core.agent.events import TextDelta
from core.agent.types import Question, Selection
from core.app import Margin
from core.errors import MarginError
from desktop.chat import history
from desktop.chat.render import (
    WHO_ANSWER,
    Colours,
    answer_html,
    css,
    markdown,
    question_html,
    quick_action_text,
    settled_length,
    shown_text,
)
from desktop.chat.transcript import Transcript
from desktop.requests import AskRequest, OpenPageRequest
from desktop.tasks import TaskKeeper
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from core.agent.service import AgentService

log = logging.getLogger("margin.chat")
REPAINT_MS = 50
FIRST_SHOWN = 16  # messages shown at once when a conversation opens (the newest)
BATCH = 6  # older messages inserted per event-loop turn after that (~10 ms each batch)
SPOILERS_END = 10**9  # "to the end": past any book's last page (as the CLI's --spoilers-until end)
ALWAYS_RETRIEVE = "always-retrieve"


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
    settled: int = 0  # characters of the answer already shown as finished blocks
    blocks: int = 0  # frames holding them

    def frame_keys(self) -> list[str]:
        return [f"{self.key}#h"] + [f"{self.key}#{i}" for i in range(self.blocks)] + [self.key]

    @property
    def key(self) -> str:
        return f"live-{self.conversation_id}"

    @property
    def question_key(self) -> str:
        return f"liveq-{self.conversation_id}"


class ChatPane(QWidget):
    requestOpenPage = Signal(object)  # OpenPageRequest
    requestSettings = Signal()
    answerRendered = Signal(int)  # conversation id; for tests and benchmarks
    _recovered = Signal()  # from recover() on a worker thread

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
        self.revealed: dict[str, set[int]] = {}
        self.selection: AskRequest | None = None
        self._views: dict[str, AnswerState] = {}
        self._shown: list[history.Shown] = []
        self._cache: dict[str, tuple[Any, str]] = {}
        self._last_answer = ""
        self._dirty = False
        self._follow = True
        self._older: list[history.Shown] = []  # not yet inserted (oldest first)
        self._generation = 0
        self._colours = Colours.from_palette(self.palette())
        self._css = css(self._colours)
        # header: conversations, menu, cost meter
        self.conversations = QComboBox()
        self.conversations.setAccessibleName("Conversations")
        # titles never widen the pane (a resize would lay the whole transcript out again)
        self.conversations.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.conversations.setMinimumContentsLength(10)
        self.conversations.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.conversations.currentIndexChanged.connect(self._conversation_chosen)
        self.new_button = tool_button("New")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.setToolTip("New conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.new_conversation)
        self.rename_button = tool_button("Rename")
        self.rename_button.setAccessibleName("Rename conversation")
        self.rename_button.clicked.connect(self.rename_conversation)
        self.delete_button = tool_button("Delete")
        self.delete_button.setAccessibleName("Delete conversation")
        self.delete_button.clicked.connect(self.delete_conversation)
        self.menu_button = tool_button("⋯")
        self.menu_button.setAccessibleName("More conversation actions")
        self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.menu_button)
        menu.addAction("Export conversation as Markdown…", self._export_conversation_dialog)
        menu.addAction("Export all conversations about this book…", self._export_book_dialog)
        self.menu_button.setMenu(menu)
        header = QHBoxLayout()
        header.addWidget(self.conversations, 1)
        for b in (self.new_button, self.rename_button, self.delete_button, self.menu_button):
            header.addWidget(b)
        self.cost = QLabel("")
        self.cost.setAccessibleName("Tokens and cost")
        # one line that never widens the pane: the transcript is never resized by it
        self.cost.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.cost.setStyleSheet(f"color: {self._colours.muted}; font-size: small;")
        # banner for passages mode
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        self.banner.setFrameShape(QFrame.Shape.StyledPanel)
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
        self.transcript.verticalScrollBar().valueChanged.connect(self._scrolled)
        # Qt lays long documents out in pieces after the fact: keep following as it grows
        self.transcript.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self.status = QLabel("")
        self.status.setAccessibleName("Chat messages")
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # selection card
        self.card = QFrame()
        self.card.setObjectName("card")
        self.card.setFrameShape(QFrame.Shape.StyledPanel)
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
        self.input.setMaximumHeight(90)
        self.input.submitted.connect(self.send)
        self.spoilers = QComboBox()
        self.spoilers.setAccessibleName("Spoilers for this question")
        self.spoilers.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.spoilers.setMinimumContentsLength(18)
        self.spoilers.addItem("No spoilers", None)
        self.spoilers.addItem("Spoilers OK up to…", "page")
        self.spoilers.addItem("Spoilers OK to the end", "end")
        self.spoilers.setToolTip(
            "For the next question only: “I don't mind spoilers up to page …” or “to the "
            "end”. Otherwise answers never name anything past where you have read."
        )
        self.spoilers.currentIndexChanged.connect(self._spoilers_changed)
        self.spoiler_page = QSpinBox(minimum=1, maximum=100000)
        self.spoiler_page.setPrefix("p. ")
        self.spoiler_page.setAccessibleName("Spoilers allowed up to page")
        self.spoiler_page.hide()
        self.send_button = QPushButton("Send")
        self.send_button.setAccessibleName("Send question")
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop the answer")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.hide()
        width = max(self.stop_button.sizeHint().width(), self.send_button.sizeHint().width())
        self.stop_button.setFixedWidth(width)
        self.send_button.setFixedWidth(width)
        buttons = QHBoxLayout()
        buttons.addWidget(self.spoilers)
        buttons.addWidget(self.spoiler_page)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.cost)
        layout.addWidget(self.banner)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.card)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        # keys
        stop_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop_key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        stop_key.activated.connect(self.stop)
        new_key = QShortcut(QKeySequence("Ctrl+N"), self)
        new_key.setContext(Qt.ShortcutContext.WindowShortcut)
        new_key.activated.connect(self.new_conversation)
        self._recovered.connect(self.redraw, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self)
        self._timer.setInterval(REPAINT_MS)
        self._timer.timeout.connect(self._tick)
        self._timer.start()
        self._update_banner()
        self.set_book(None)

    # service ---------------------------------------------------------------------------

    @property
    def service(self) -> AgentService:
        return self.app.agent

    def settings_changed(self) -> None:
        try:
            self.app.reload_settings()
        except MarginError as exc:
            self.status.setText(str(exc))
        self._update_banner()

    def _update_banner(self) -> None:
        try:
            mode = self.app.mode()  # does not build the agent (start-up stays fast)
        except MarginError as exc:
            self.status.setText(str(exc))
            mode = "passages"
        self.banner.setVisible(mode == "passages")

    def recover(self) -> None:
        """Mark answers a crash left running as interrupted (runs on a worker thread)."""
        count = self.service.recover_interrupted()
        if count:
            log.info("marked %d interrupted answers", count)
            self._recovered.emit()

    async def warm_up(self) -> None:
        """Import the model SDK in a thread now, and build the client (its TLS set-up takes
        tens of ms; the client must be made on the loop's thread) at start-up rather than in
        the middle of the first answer."""
        if self.app.mode() != "passages":
            from core.agent.providers.anthropic import load_sdk

            await load_sdk()
            self.service.provider()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._colours = Colours.from_palette(self.palette())
            self._css = css(self._colours)
            self.cost.setStyleSheet(f"color: {self._colours.muted}; font-size: small;")
            self._cache.clear()
            if hasattr(self, "_timer"):
                self.redraw()
        super().changeEvent(event)

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
            self.menu_button,
            self.input,
            self.send_button,
        ):
            w.setEnabled(enabled)
        if book_id is not None:
            try:
                self.spoiler_page.setMaximum(max(1, self.library.get_book(book_id).page_count))
            except MarginError:
                pass
        self._reload_conversations()

    def _fill_combo(self) -> list[Any]:
        items = self.service.list_conversations(self.book_id) if self.book_id else []
        self.conversations.blockSignals(True)
        wanted = [(f"{c.title}{' ●' if c.id in self.live else ''}", c.id) for c in items]
        have = [
            (self.conversations.itemText(i), self.conversations.itemData(i))
            for i in range(self.conversations.count())
        ]
        if [d for _, d in wanted] == [d for _, d in have]:
            for i, (title, _) in enumerate(wanted):
                if have[i][0] != title:
                    self.conversations.setItemText(i, title)
        else:
            self.conversations.clear()
            for title, conv_id in wanted:
                self.conversations.addItem(title, conv_id)
        if self.conversation_id is not None:
            index = self.conversations.findData(self.conversation_id)
            if index >= 0:
                self.conversations.setCurrentIndex(index)
        self.conversations.blockSignals(False)
        return items

    def _reload_conversations(self, select: int | None = None) -> None:
        items = self._fill_combo()
        target = select if select is not None else (items[0].id if items else None)
        if target is not None:
            self.conversations.blockSignals(True)
            self.conversations.setCurrentIndex(max(0, self.conversations.findData(target)))
            self.conversations.blockSignals(False)
        self.conversation_id = target
        self.redraw()

    def _refresh_titles(self) -> None:
        """Titles and running marks change; the transcript does not."""
        if self.book_id is not None:
            self._fill_combo()

    def _conversation_chosen(self, index: int) -> None:
        data = self.conversations.itemData(index)
        self.conversation_id = int(data) if data is not None else None
        self.redraw()

    def new_conversation(self) -> None:
        """Start a conversation, or go to an empty one that is already there."""
        if self.book_id is None:
            return
        empty = next(
            (
                c
                for c in self.service.list_conversations(self.book_id)
                if c.message_count == 0 and c.id not in self.live
            ),
            None,
        )
        conv = empty or self.service.create_conversation(self.book_id)
        self._reload_conversations(select=conv.id)
        self.focus_input()

    def rename_conversation(self) -> None:
        if self.conversation_id is None:
            return
        current = self.service.get_conversation(self.conversation_id).title
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:", text=current)
        if ok and title.strip():
            self.service.rename_conversation(self.conversation_id, title)
            self._refresh_titles()

    def delete_conversation(self) -> None:
        if self.conversation_id is None:
            return
        answer = QMessageBox.question(
            self, "Delete conversation", "Delete this conversation? This cannot be undone."
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        conversation_id = self.conversation_id
        if not self.answering(conversation_id=conversation_id):
            self.service.delete_conversation(conversation_id)
            self._reload_conversations()
            return

        async def stop_then_delete() -> None:
            # its answer stops first and saves what it wrote; then nothing is left writing
            await self.stop_answers(conversation_id=conversation_id)
            try:
                self.service.delete_conversation(conversation_id)
            except MarginError:
                pass  # deleted meanwhile (another window, the CLI)
            self._reload_conversations()

        self.tasks.start(stop_then_delete(), key=f"delete:{conversation_id}")

    def _chosen(self, conversation_id: int | None, book_id: int | None) -> list[LiveRun]:
        chosen = []
        for live in list(self.live.values()):
            if conversation_id is not None and live.conversation_id != conversation_id:
                continue
            if book_id is not None:
                try:
                    owner = self.service.get_conversation(live.conversation_id).book_id
                except MarginError:
                    owner = None
                if owner != book_id:
                    continue
            chosen.append(live)
        return chosen

    def answering(self, *, conversation_id: int | None = None, book_id: int | None = None) -> bool:
        """Whether an answer is being written (in that conversation, or about that book)."""
        return bool(self._chosen(conversation_id, book_id))

    async def stop_answers(
        self, *, conversation_id: int | None = None, book_id: int | None = None
    ) -> None:
        """Stop the answers being written (in one conversation, or about one book) and wait
        until they have saved what they wrote: before that conversation or book goes."""
        chosen = self._chosen(conversation_id, book_id)
        for live in chosen:
            live.stop.set()
        tasks = [live.task for live in chosen if live.task is not None and not live.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)

    # asking ---------------------------------------------------------------------------------

    def focus_input(self) -> None:
        self.input.setFocus()

    def handle_ask(self, request: AskRequest) -> None:
        """A selection from the reader: "ask" waits for the question; a quick action is sent
        at once, shown as the reader would say it, with its template only for the model."""
        if request.book_id != self.book_id:
            self.set_book(request.book_id)
        if request.action == "ask" or not request.prompt:
            self.selection = request
            short = request.text if len(request.text) < 400 else request.text[:397] + "…"
            self.card_text.setText(f"“{short}” — p. {request.page}")
            self.card.show()
            self.focus_input()
            return
        shown = quick_action_text(request.action, request.text, request.page)
        self.ask(shown, request, prompt=request.prompt, elsewhere_if_busy=True)

    def clear_selection(self) -> None:
        self.selection = None
        self.card.hide()

    def _spoilers_changed(self) -> None:
        self.spoiler_page.setVisible(self.spoilers.currentData() == "page")

    def spoilers_until(self) -> int | None:
        """The reader's choice for the next question only."""
        choice = self.spoilers.currentData()
        if choice == "end":
            return SPOILERS_END
        if choice == "page":
            return int(self.spoiler_page.value())
        return None

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.book_id is None:
            return
        if self.conversation_id is not None and self.conversation_id in self.live:
            self.status.setText(
                "An answer is still being written here. Press Esc to stop it, or Ctrl+N to "
                "ask in a new conversation."
            )
            return
        if self.ask(text, self.selection, spoilers_until=self.spoilers_until()) is not None:
            self.input.clear()
            self.spoilers.setCurrentIndex(0)

    def _free_conversation(self) -> int | None:
        """An empty conversation of the book that is not answering (made when needed)."""
        assert self.book_id is not None
        for conv in self.service.list_conversations(self.book_id):
            if conv.message_count == 0 and conv.id not in self.live:
                return conv.id
        return self.service.create_conversation(self.book_id).id

    def _budget_allows(self) -> bool:
        """With a budget per book set: ask before a question would go past it."""
        budget = float(getattr(self.service.settings, "budget_per_book_usd", 0.0) or 0.0)
        if budget <= 0 or self.book_id is None:
            return True
        _usage, cost, runs = history.book_cost(self.service, self.book_id)
        spent = cost or 0.0
        projected = spent + (spent / runs if runs else 0.0)
        if projected <= budget:
            return True
        answer = QMessageBox.question(
            self,
            "Budget for this book",
            f"Conversations about this book have cost about ${spent:.2f}; one more question "
            f"may take them past your budget of ${budget:.2f}. Ask anyway?",
        )
        if answer == QMessageBox.StandardButton.Yes:
            return True
        self.status.setText(
            f"Not asked: it would go past the budget of ${budget:.2f} for this book "
            "(change it in Settings)."
        )
        return False

    def ask(
        self,
        text: str,
        selection: AskRequest | None = None,
        *,
        regenerate: bool = False,
        prompt: str = "",
        strategy: str | None = None,
        spoilers_until: int | None = None,
        elsewhere_if_busy: bool = False,
    ) -> int | None:
        """Start an answer in the current conversation (creating one when needed). With
        ``elsewhere_if_busy`` a conversation that is answering hands the question to an
        empty one instead of refusing it."""
        if self.book_id is None:
            return None
        if self.conversation_id is None:
            conv = self.service.create_conversation(self.book_id)
            self._reload_conversations(select=conv.id)
        if self.conversation_id in self.live and elsewhere_if_busy and not regenerate:
            self._reload_conversations(select=self._free_conversation())
        conversation_id = self.conversation_id
        assert conversation_id is not None
        if conversation_id in self.live:
            self.status.setText(
                "An answer is still being written here. Press Esc to stop it, or Ctrl+N to "
                "ask in a new conversation."
            )
            return None
        if not self._budget_allows():
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
        self.status.setText("")
        if regenerate:
            events = self.service.regenerate(conversation_id, strategy=strategy, stop=live.stop)
            # the previous attempt leaves the transcript at once
            drop = [s for s in self._shown if s.run_id is not None]
            last_run = drop[-1].run_id if drop else None
            for s in [s for s in self._shown if s.run_id == last_run and last_run is not None]:
                self.transcript.remove(s.key)
                self._shown.remove(s)
                self._cache.pop(s.key, None)
        else:
            events = self.service.ask(
                conversation_id,
                Question(text, sel, prompt),
                strategy=strategy,
                stop=live.stop,
                spoilers_until=spoilers_until,
            )
        live.task = self.tasks.start(self._consume(live, events), key=f"chat:{conversation_id}")
        self._running_changed()
        self._refresh_titles()
        self._show_live(live)
        return conversation_id

    async def _consume(self, live: LiveRun, events: Any) -> None:
        view = live.view
        try:
            async for event in events:
                view.apply(event)
                self._dirty = True
                if isinstance(event, TextDelta) and live.first_text_at is None:
                    live.first_text_at = time.perf_counter()
                    self._tick()  # the first words show at once
        except MarginError as exc:
            # nothing was persisted (for example the conversation was deleted): keep the text
            view.status = "failed"
            view.error = None
            if shiboken6.isValid(self.status):
                self.status.setText(str(exc))
                if not self.input.toPlainText().strip():
                    self.input.setPlainText(live.question)
        finally:
            await self._close_out(live)

    async def _close_out(self, live: LiveRun) -> None:
        """The answer ended: show its final state at once, read the stored messages on a
        database thread, then turn the live frames into them."""
        loaded: tuple[list[history.Shown], str] | None = None
        if not (shiboken6.isValid(self) and shiboken6.isValid(self.stop_button)):
            self.live.pop(live.conversation_id, None)  # the window is gone
            return
        if live.conversation_id == self.conversation_id and live.view.run_id is not None:
            self._paint_live(live)
            try:
                loop = asyncio.get_running_loop()
                loaded = await loop.run_in_executor(
                    self.app.executor, self._read_conversation, live.conversation_id
                )
            except (MarginError, RuntimeError):
                loaded = None
        self.live.pop(live.conversation_id, None)
        if not (shiboken6.isValid(self) and shiboken6.isValid(self.stop_button)):
            return
        self._running_changed()
        self._refresh_titles()  # titles come from the first question
        if live.conversation_id == self.conversation_id:
            self._finish_live(live, loaded)
        self.answerRendered.emit(live.conversation_id)

    def _read_conversation(self, conversation_id: int) -> tuple[list[history.Shown], str]:
        """On a database thread: the conversation's messages and the cost line."""
        return history.load(self.service, conversation_id), self._cost_text(conversation_id)

    def stop(self) -> None:
        if self.conversation_id is not None and self.conversation_id in self.live:
            self.live[self.conversation_id].stop.set()
            self.status.setText("Stopping…")

    def _running_changed(self) -> None:
        running = self.conversation_id in self.live
        # Stop takes Send's place: the row keeps its width, so the pane is never resized
        self.stop_button.setVisible(running)
        self.send_button.setVisible(not running)
        self.send_button.setEnabled(not running and self.book_id is not None)
        if not running and self.status.text() == "Stopping…":
            self.status.setText("")

    def hideEvent(self, event: Any) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def showEvent(self, event: Any) -> None:
        self._timer.start()
        super().showEvent(event)

    async def shutdown(self) -> None:
        if shiboken6.isValid(self._timer):  # the window may already be gone
            self._timer.stop()
        runs = list(self.live.values())
        for live in runs:
            live.stop.set()
        tasks = [r.task for r in runs if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=3.0)

    # rendering --------------------------------------------------------------------------------

    def _scrolled(self, _value: int) -> None:
        self._follow = self.transcript.at_bottom()

    def _range_changed(self, _low: int, _high: int) -> None:
        if self._follow:
            self.transcript.scroll_to_end()

    def _render(self, shown: history.Shown) -> str:
        if shown.question is not None:
            q = shown.question
            cached = self._cache.get(shown.key)
            if cached is None or cached[0] != (q.run_id, q.text):  # ids come back after a delete
                cached = (
                    (q.run_id, q.text),
                    question_html(q.text, q.selection_text, q.selection_page),
                )
                self._cache[shown.key] = cached
            return cached[1]
        view = shown.answer
        assert view is not None
        return self._render_answer(view)

    def _render_answer(self, view: AnswerState) -> str:
        key = view.key
        variant = (
            view.run_id,
            view.status,
            len(view.text),
            "s" + key in self.expanded,
            "t" + key in self.expanded,
            frozenset(self.revealed.get(key, ())),
            key == self._last_answer,
        )
        cached = self._cache.get(key)
        if cached is not None and cached[0] == variant and view.finished:
            return cached[1]
        text = answer_html(
            view,
            expanded=self.expanded,
            last=key == self._last_answer,
            revealed=self.revealed.get(key, set()),
        )
        if view.finished:
            self._cache[key] = (variant, text)
        return text

    def _placeholder(self) -> str:
        muted = self._colours.muted
        words = (
            "Ask a question about this book. Select text in the book to ask about a passage."
            if self.book_id
            else "Open a book to talk about it."
        )
        return f"<p style='color:{muted}'>{words}</p>"

    def redraw(self) -> None:
        """Show the current conversation from the store (when it changes, not per tick)."""
        self._running_changed()
        self._update_cost()
        if self.conversation_id is None:
            self._shown = []
            self._views = {}
            self.transcript.reset(self._css, self._placeholder())
            return
        try:
            shown = history.load(self.service, self.conversation_id)
        except MarginError:  # deleted elsewhere (another window, the CLI)
            self.conversation_id = None
            self._reload_conversations()
            return
        live = self.live.get(self.conversation_id)
        if live is not None:
            skip: set[int | None] = {live.view.run_id}
            if live.view.run_id is None:  # not started yet: its stored placeholder is this run
                skip |= {s.run_id for s in shown if s.answer and s.answer.status == "running"}
            shown = [s for s in shown if s.run_id is None or s.run_id not in skip]
        self._shown = shown
        self._views = {s.key: s.answer for s in shown if s.answer is not None}
        answers = [s.key for s in shown if s.answer is not None]
        self._last_answer = answers[-1] if answers and live is None else ""
        self.transcript.reset(self._css)
        # the newest messages at once; older ones a few per event-loop turn, above them, so
        # opening a long conversation never freezes the window
        self._generation += 1
        self._older = list(shown[:-FIRST_SHOWN]) if len(shown) > FIRST_SHOWN else []
        for s in shown[len(self._older) :]:
            self.transcript.add(s.key, self._render(s))
        if self._older:
            generation = self._generation
            QTimer.singleShot(0, lambda: self._insert_older(generation))
        if not shown and live is None:
            self.transcript.reset(self._css, self._placeholder())
        if live is not None:
            self._show_live(live)
        self._follow = True
        self.transcript.scroll_to_end()

    def _insert_older(self, generation: int) -> None:
        if generation != self._generation or not shiboken6.isValid(self):
            return  # another conversation was opened meanwhile
        batch = self._older[-BATCH:]
        del self._older[-BATCH:]
        bar = self.transcript.verticalScrollBar()
        follow, value, maximum = self._follow, bar.value(), bar.maximum()
        for s in reversed(batch):
            self.transcript.prepend(s.key, self._render(s))
        if follow:
            self.transcript.scroll_to_end()
        else:  # what the reader is looking at stays in place
            bar.setValue(value + bar.maximum() - maximum)
        if self._older:
            QTimer.singleShot(0, lambda: self._insert_older(generation))

    def history_complete(self) -> bool:
        """Whether every message of the open conversation is in the transcript."""
        return not self._older

    def _show_live(self, live: LiveRun) -> None:
        if live.conversation_id != self.conversation_id:
            return
        if not self._shown and not self.transcript.has(live.question_key):
            self.transcript.reset(self._css)
        if not self.transcript.has(live.question_key):
            self.transcript.add(
                live.question_key,
                question_html(live.question, live.selection_text, live.selection_page),
            )
        self._views[live.key] = live.view
        if not self.transcript.has(live.key):
            live.settled = live.blocks = 0
            self.transcript.add(f"{live.key}#h", WHO_ANSWER)
        self._paint_live(live)
        self.transcript.scroll_to_end()
        self._follow = True

    def _paint_live(self, live: LiveRun) -> None:
        """Repaint the live answer: blocks that became final are rendered once into their own
        frame; only the unfinished tail is replaced on each tick."""
        view = live.view
        text = shown_text(view, self.revealed.get(live.key, set()))
        settled = settled_length(text) if view.status == "running" else live.settled
        if settled > live.settled:
            # the tail frame keeps the finished blocks; a new tail frame follows it
            self.transcript.replace(live.key, markdown(text[live.settled : settled]))
            self.transcript.rekey(live.key, f"{live.key}#{live.blocks}")
            live.blocks += 1
            live.settled = settled
            self.transcript.add(live.key, "")
        self.transcript.replace(
            live.key,
            answer_html(
                view,
                expanded=self.expanded,
                revealed=self.revealed.get(live.key, set()),
                body=text[live.settled :],
            ),
        )

    def _tick(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        live = self.live.get(self.conversation_id) if self.conversation_id is not None else None
        if live is None:
            return
        follow = self._follow
        self._paint_live(live)
        if follow:
            self.transcript.scroll_to_end()
            self._follow = True
        self.answerRendered.emit(live.conversation_id)

    def _finish_live(self, live: LiveRun, loaded: tuple[list[history.Shown], str] | None) -> None:
        """The live frames become the stored messages."""
        follow = self._follow
        run_id = live.view.run_id
        if run_id is None or loaded is None:  # nothing stored (the error is in the status line)
            self.redraw()
            return
        shown, cost_text = loaded
        new = [s for s in shown if s.run_id == run_id]
        previous_last = self._last_answer
        self.transcript.remove(live.question_key)
        for key in live.frame_keys():
            self.transcript.remove(key)
        self._views.pop(live.key, None)
        if not self._shown:
            self.transcript.reset(self._css)
        answers = [s.key for s in shown if s.answer is not None]
        self._last_answer = answers[-1] if answers else ""
        for s in new:
            if s.answer is not None:
                # what was revealed or opened while it streamed stays so
                if live.key in self.revealed:
                    self.revealed[s.key] = self.revealed.pop(live.key)
                for prefix in ("s", "t"):
                    if prefix + live.key in self.expanded:
                        self.expanded.discard(prefix + live.key)
                        self.expanded.add(prefix + s.key)
            self._cache.pop(s.key, None)
            self.transcript.add(s.key, self._render(s))
        self._shown = shown
        self._views = {s.key: s.answer for s in shown if s.answer is not None}
        if previous_last and previous_last != self._last_answer:
            # only its Regenerate link goes: a later event-loop turn, so the close-out and
            # this re-render never add up to one long stall
            QTimer.singleShot(0, lambda: self._rerender(previous_last))
        self.cost.setText(cost_text)
        if follow:
            self.transcript.scroll_to_end()

    def _rerender(self, key: str) -> None:
        if not shiboken6.isValid(self):
            return
        view = self._views.get(key)
        if view is not None and self.transcript.has(key):
            self.transcript.replace(key, self._render_answer(view))

    def _update_cost(self) -> None:
        self.cost.setText(self._cost_text(self.conversation_id))

    def _cost_text(self, conversation_id: int | None) -> str:
        """ "This conversation: 12.3k tokens (~$0.04) · This book: …" (any thread)."""
        if self.book_id is None:
            return ""
        parts = []
        if conversation_id is not None:
            try:
                usage, cost = history.conversation_cost(self.service, conversation_id)
                parts.append(f"This conversation: {history.tokens_label(usage, cost)}")
            except MarginError:
                pass
        book_usage, book_cost, _runs = history.book_cost(self.service, self.book_id)
        parts.append(f"This book: {history.tokens_label(book_usage, book_cost)}")
        budget = float(getattr(self.service.settings, "budget_per_book_usd", 0.0) or 0.0)
        if budget > 0:
            parts.append(f"budget ${budget:.2f}")
        return " · ".join(parts)

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    # export ----------------------------------------------------------------------------------

    def export_conversation(self, path: Path) -> Path:
        from core.export import export_conversation

        assert self.conversation_id is not None
        return export_conversation(self.app, self.conversation_id, path)

    def export_book(self, path: Path) -> Path:
        from core.export import export_book_conversations

        assert self.book_id is not None
        return export_book_conversations(self.app, self.book_id, path)

    def _export_conversation_dialog(self) -> None:
        if self.conversation_id is not None:
            self._export_dialog("conversation", "conversation.md", self.export_conversation)

    def _export_book_dialog(self) -> None:
        if self.book_id is not None:
            self._export_dialog("conversations", "conversations.md", self.export_book)

    def _export_dialog(self, what: str, default: str, export: Callable[[Path], Path]) -> None:
        name, _ = QFileDialog.getSaveFileName(self, f"Export {what}", default, "Markdown (*.md)")
        if name:
            try:
                self.status.setText(f"Saved {export(Path(name))}.")
            except (MarginError, OSError) as exc:
                self.status.setText(f"The {what} could not be saved: {exc}")

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
        elif action == "ground" and arg in self._views:
            self.retry(arg, strategy=ALWAYS_RETRIEVE)
        elif action == "reveal":
            key, _, index = arg.partition("/")
            if index.isdigit():
                self.revealed.setdefault(key, set()).add(int(index))
                live = next((r for r in self.live.values() if r.key == key), None)
                if live is not None and live.conversation_id == self.conversation_id:
                    for frame in live.frame_keys()[1:-1]:  # finished blocks: paint afresh
                        self.transcript.remove(frame)
                    live.settled = live.blocks = 0
                    self._paint_live(live)
                else:
                    self._rerender(key)
        elif action in ("sources", "trace"):
            self.expanded.symmetric_difference_update({action[0] + arg})
            self._rerender(arg)

    def retry(self, key: str, *, strategy: str | None = None) -> None:
        """Ask an answer's question again: the last one is replaced, an older one is re-asked."""
        view = self._views.get(key)
        if view is None or self.conversation_id is None:
            return
        runs = [s.run_id for s in self._shown if s.run_id is not None]
        last_run = runs[-1] if runs else None
        if view.run_id is not None and view.run_id == last_run:
            self.ask(view.retry_text, regenerate=True, strategy=strategy)
        elif view.retry_text:
            self.ask(view.retry_text, strategy=strategy)
