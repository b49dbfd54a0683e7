"""The chat pane: conversations about the open book, streaming answers with page chips,
Stop (Esc), Retry, Regenerate, Copy, the selection card, the quick actions, the per-question
spoiler choice, the cost meter and Markdown export.

All agent logic is in ``core``: the pane iterates ``AgentService.ask`` on the qasync loop and
folds the events into an ``AnswerState``. The pane wires its parts and owns the answers being
written (``runs``); each part has one job: ``header`` (the conversations and the cost meter),
``messages`` (what the transcript shows: each message rendered once, the live answer
repainted by a 50 ms timer), ``composer`` (the question, the selection card, the spoiler
choice, Send and Stop) and ``sources`` (the links in answers). The store is read on a worker
thread when the book or conversation changes or an answer ends, never per tick.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QHideEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.agent.providers.sentence_warmup import SentenceWarmup, pages_ahead
from core.api_key import api_key_known, get_api_key
from core.app import Margin
from core.errors import MarginError
from core.store.conversations import ConversationInfo
from desktop.accessibility import StatusLabel
from desktop.chat import history, sources
from desktop.chat.composer import SPOILERS_END, Composer
from desktop.chat.first_question import FirstQuestion
from desktop.chat.header import ConversationHeader, ModeBanner, export_dialog
from desktop.chat.messages import Messages
from desktop.chat.pictures_notice import PicturesNotice
from desktop.chat.render import quick_action_text
from desktop.chat.runs import BUSY, Answering
from desktop.chat.thread_header import ThreadHeader
from desktop.chat.transcript import Transcript
from desktop.events import BookClosed, BookOpened, ConversationChanged, Events, ReadToChanged
from desktop.requests import AskRequest
from desktop.tasks import TaskKeeper, in_background, run_blocking

if TYPE_CHECKING:
    from core.agent.service import AgentService

REPAINT_MS = 50
READ_AHEAD_MS = 2000  # after a book opens, passages mode starts reading its sentences ahead
__all__ = ["SPOILERS_END", "ChatPane"]


def _pages_ahead(app: Margin, book_id: int) -> list[tuple[int, str]]:
    """The pages to read ahead, or none when a model answers (on a worker thread)."""
    return pages_ahead(app.library, book_id) if app.mode() == "passages" else []


class ChatPane(QWidget):
    requestOpenPage = Signal(object)  # OpenPageRequest
    requestSettings = Signal()
    answerRendered = Signal(int)  # conversation id; for tests and benchmarks
    _recovered = Signal()  # from recover() on a worker thread

    def __init__(
        self,
        app: Margin,
        tasks: TaskKeeper,
        events: Events | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("Chat")
        self.app = app
        self.tasks = tasks
        # the book comes from the stream; a thread started or deleted goes out on it
        self.events = events if events is not None else Events()
        self.events.subscribe(BookOpened, lambda e: self.set_book(e.book_id))
        self.events.subscribe(BookClosed, lambda e: None if e.reopening else self.set_book(None))
        self.book_id: int | None = None
        self.conversation_id: int | None = None
        self.runs = Answering(self)
        self.live = self.runs.live
        self.dirty = False
        self._loading = 0  # generation of the read under way (0: none)
        self._generation = 0
        self._closed = False
        self.read_ahead = SentenceWarmup()  # passages mode: the book's sentences, encoded
        self.first_question = FirstQuestion(app, self)  # a model's: its client, the book's part
        self.first_question.follow(self.events)  # a selection may be asked about
        self._read_on = QTimer(self)  # reading on: the new pages are read ahead once it pauses
        self._read_on.setSingleShot(True)
        self._read_on.setInterval(READ_AHEAD_MS)
        self._read_on.timeout.connect(lambda: self._start_read_ahead(self.book_id))
        self.events.subscribe(ReadToChanged, lambda e: self._read_on.start())
        self.header = ConversationHeader()
        self.header.conversationChosen.connect(self._conversation_chosen)
        self.header.requestNew.connect(self.new_conversation)
        self.header.requestRename.connect(self.rename_conversation)
        self.header.requestDelete.connect(self.delete_conversation)
        self.header.requestExportConversation.connect(lambda: self._export_dialog(False))
        self.header.requestExportBook.connect(lambda: self._export_dialog(True))
        self.conversations, self.cost = self.header.conversations, self.header.cost
        self.thread_header = ThreadHeader()  # a thread's passage ("About p. 40: “…”")
        self.thread_header.requestOpenPage.connect(self.requestOpenPage)
        self.banner = ModeBanner()
        self.banner.requestSettings.connect(self.requestSettings)
        self.connect_button = self.banner.connect_button
        self.pictures = PicturesNotice()  # the book's pages are pictures the assistant cannot read
        self.transcript = Transcript()
        self.transcript.setAccessibleName("Conversation")
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        self.messages = Messages(self.transcript, self.palette())
        self.header.set_muted(self.messages.colours.muted)
        self.status = StatusLabel("")
        # no fixed name: a screen reader reads what it says (and hears each new message)
        self.status.setAccessibleDescription("Chat messages")
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.composer = Composer()
        self.composer.requestSend.connect(self.send)
        self.composer.requestStop.connect(self.stop)
        c = self.composer
        c.input.textChanged.connect(lambda: self.first_question.question_edited(c.question()))
        self.input, self.card, self.card_text = c.input, c.card, c.card_text
        self.spoilers, self.send_button, self.stop_button = c.spoilers, c.send_button, c.stop_button
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.thread_header)
        layout.addWidget(self.banner)
        layout.addWidget(self.pictures)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.status)
        from desktop.chat.starters import Starters

        self.starters = Starters(app)  # one-click starters under an empty conversation
        self.starters.requestAsk.connect(lambda shown, prompt: self.ask(shown, prompt=prompt))
        layout.addWidget(self.starters)
        layout.addWidget(self.composer)
        stop_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop_key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        stop_key.setWhatsThis("Stop the answer (in the chat)")  # the shortcut list says it
        stop_key.activated.connect(self.stop)
        new_key = QShortcut(QKeySequence("Ctrl+N"), self)
        new_key.setContext(Qt.ShortcutContext.WindowShortcut)
        new_key.setWhatsThis("New conversation")
        new_key.activated.connect(self.new_conversation)
        self._recovered.connect(self.redraw, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self)
        self._timer.setInterval(REPAINT_MS)
        self._timer.timeout.connect(self.tick)
        self._timer.start()
        # the key's look-up (the system keyring: ~140 ms) waits until the pane is painted
        from desktop.runtime.startup_timing import after_first_paint

        after_first_paint(self, self._update_banner)
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
        if self.service.recover_interrupted():
            self._recovered.emit()

    async def warm_up(self) -> None:
        """Read the key, then ready the first question (``FirstQuestion``: the model's SDK and
        client on the thread its answers stream on, then the open book's part) at start-up
        rather than in the middle of the first answer."""
        if not api_key_known() and self.app.settings.provider != "local":
            await run_blocking(get_api_key)  # the keyring's one read (it may prompt), off
            if not shiboken6.isValid(self.banner):
                return  # the window closed meanwhile
            self._update_banner()  # the window's thread; the banner shows what it found
        if self.app.mode() != "passages":
            await self.first_question.warm_model()  # then the open book's part, when quiet

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_timer"):
            self.messages.set_palette(self.palette())
            self.header.set_muted(self.messages.colours.muted)
            self.transcript.document().setDefaultStyleSheet(self.messages.css)
            self.redraw()
        super().changeEvent(event)

    # books and conversations (read on a worker thread) ---------------------------------

    def set_book(self, book_id: int | None) -> None:
        book_id = book_id or None
        if book_id == self.book_id and book_id is not None:
            return
        self.book_id = book_id
        self.conversation_id = None
        self.messages.set_labels([])  # the new book's printed pages come with its conversations
        self.composer.set_book(book_id is not None)
        self.header.set_book_open(book_id is not None)
        self.pictures.set_book(self.app.library, book_id)
        self._load(True)
        self._read_ahead(book_id)
        self.first_question.set_book(book_id)

    def _read_ahead(self, book_id: int | None) -> None:
        """In passages mode, encode the open book's sentences up to read_to in the
        background, so that the first reply encodes only its question (issue 41)."""
        self.read_ahead.stop()
        if book_id is not None:  # once the book is drawn
            QTimer.singleShot(READ_AHEAD_MS, self, lambda: self._start_read_ahead(book_id))

    def _start_read_ahead(self, book_id: int | None) -> None:
        if self._closed or book_id is None or self.book_id != book_id:
            return
        self.first_question.reader_moved(book_id)

        def start(pages: list[tuple[int, str]]) -> None:
            if pages and not self._closed and self.book_id == book_id:
                self.read_ahead.start(pages)

        in_background(_pages_ahead, self.app, book_id, then=start, failed=lambda _: None)

    def select_conversation(self, conversation_id: int) -> None:
        """Show this conversation (once the store is read)."""
        self.conversation_id = conversation_id
        self._load(False)

    def redraw(self) -> None:
        """Show the current conversation from the store (when it changes, not per tick)."""
        self._load(self.conversation_id is None)

    def _load(self, newest: bool) -> None:
        if self._closed:  # the window is going: nothing more is read
            return
        self.running_changed()
        self._generation += 1
        self._loading = self._generation
        if self.book_id is None:  # nothing to read
            self._show(self._generation, history.Loaded(None))
            return
        generation = self._generation
        in_background(
            history.read,
            self.service,
            self.book_id,
            self.conversation_id,
            newest,
            then=lambda loaded: self._show(generation, loaded),
            failed=lambda exc: self._read_failed(generation, exc),
        )

    def _read_failed(self, generation: int, exc: Exception) -> None:
        if not isinstance(exc, MarginError):  # a bug: the global hook logs it and says so
            sys.excepthook(type(exc), exc, exc.__traceback__)
        self._show(generation, history.Loaded(None))  # the book went meanwhile

    def _show(self, generation: int, loaded: history.Loaded) -> None:
        if generation != self._generation or not shiboken6.isValid(self.transcript):
            return  # another book or conversation was chosen meanwhile
        self._loading = 0
        self.conversation_id = loaded.conversation_id
        self.header.fill(loaded.items, self.live, self.conversation_id)
        shown = next((c for c in loaded.items if c.id == self.conversation_id), None)
        self.thread_header.show_conversation(self.book_id, shown)
        self.cost.setText(loaded.cost)
        if loaded.pages is not None:
            self.composer.spoiler_page.setMaximum(max(1, loaded.pages))
        self.running_changed()
        self.messages.set_labels(loaded.labels)
        placeholder = self.messages.placeholder(self.book_id is not None)
        empty = self.conversation_id is None or not (
            loaded.shown or self.conversation_id in self.live
        )
        self.starters.update_for(self.book_id, empty)
        if self.conversation_id is None:
            self.messages.clear(placeholder)
        else:
            self.messages.show(loaded.shown, self.live.get(self.conversation_id), placeholder)

    def refresh_titles(self) -> None:
        """Titles and running marks change; the transcript does not."""
        book_id = self.book_id
        if book_id is not None and not self._closed:
            in_background(
                self.service.list_conversations, book_id, then=lambda c: self._titles(book_id, c)
            )

    def _titles(self, book_id: int, items: list[ConversationInfo]) -> None:
        if book_id == self.book_id and shiboken6.isValid(self.header):
            self.header.fill(items, self.live, self.conversation_id)

    def loaded(self) -> None:
        """Fresher messages are shown: a read still under way is dropped."""
        self._generation += 1
        self._loading = 0

    def history_complete(self) -> bool:
        """Whether every message of the open conversation is in the transcript."""
        return not self._loading and self.messages.complete()

    def _conversation_chosen(self, conversation_id: int | None) -> None:
        self.conversation_id = conversation_id
        self.redraw()

    def new_conversation(self) -> None:
        """Start a conversation, or go to an empty one that is already there."""
        if self.book_id is None:
            return
        conv_id = (
            history.idle_conversation(self.service, self.book_id, self.live)
            or self.service.create_conversation(self.book_id).id
        )
        self.select_conversation(conv_id)
        self.focus_input()

    def rename_conversation(self) -> None:
        if self.conversation_id and self.header.rename(self.service, self.conversation_id):
            self.refresh_titles()

    def delete_conversation(self) -> None:
        conversation_id = self.conversation_id
        if conversation_id is not None and self.header.confirm_delete():
            self.tasks.start(self._delete(conversation_id), key=f"delete:{conversation_id}")

    async def _delete(self, conversation_id: int) -> None:
        # its answer stops first and saves what it wrote; then nothing is left writing
        await self.stop_answers(conversation_id=conversation_id)
        try:
            self.service.delete_conversation(conversation_id)
        except MarginError:
            pass  # deleted meanwhile (another window, the CLI)
        if self.book_id is not None:
            self.events.publish(ConversationChanged(self.book_id))  # its mark goes with it
        self._load(True)

    def answering(self, *, conversation_id: int | None = None, book_id: int | None = None) -> bool:
        """Whether an answer is being written (in that conversation, or about that book)."""
        return bool(self.runs.chosen(conversation_id, book_id))

    async def stop_answers(
        self, *, conversation_id: int | None = None, book_id: int | None = None
    ) -> None:
        """Stop the answers being written (in one conversation, or about one book) and wait
        until they have saved what they wrote: before that conversation or book goes."""
        await self.live.stop(self.runs.chosen(conversation_id, book_id))

    # asking ---------------------------------------------------------------------------------

    def focus_input(self) -> None:
        self.input.setFocus()

    def handle_ask(self, request: AskRequest) -> None:
        """A selection from the reader: "ask" waits for the question; a quick action is sent
        at once, shown as the reader would say it, with its template only for the model."""
        if request.book_id != self.book_id:
            self.set_book(request.book_id)
        if request.action == "ask" or not request.prompt:
            self.composer.show_selection(request)
            return
        shown = quick_action_text(request.action, request.text, request.page, self.messages.labels)
        self.ask(shown, request, prompt=request.prompt, elsewhere_if_busy=True)

    def clear_selection(self) -> None:
        self.composer.clear_selection()

    def send(self) -> None:
        text = self.composer.question()
        if not text or self.book_id is None:
            return
        if self.conversation_id is not None and self.conversation_id in self.live:
            self.status.setText(BUSY)
            return
        c = self.composer
        if self.ask(text, c.selection, spoilers_until=c.spoilers_until()) is not None:
            self.composer.sent()

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
        """Start an answer (see ``Answering.ask``): the conversation's id, or ``None``."""
        return self.runs.ask(
            text,
            selection,
            regenerate=regenerate,
            prompt=prompt,
            strategy=strategy,
            spoilers_until=spoilers_until,
            elsewhere_if_busy=elsewhere_if_busy,
        )

    def stop(self) -> None:
        if self.conversation_id is not None and self.conversation_id in self.live:
            self.live[self.conversation_id].stop.set()
            self.status.setText("Stopping…")

    def running_changed(self) -> None:
        running = self.conversation_id in self.live
        self.composer.set_running(running, self.book_id is not None)
        if not running and self.status.text() == "Stopping…":
            self.status.setText("")

    def tick(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        live = self.live.get(self.conversation_id) if self.conversation_id is not None else None
        if live is not None:
            self.messages.tick(live)
            self.answerRendered.emit(live.conversation_id)

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        self._timer.start()
        super().showEvent(event)

    async def shutdown(self) -> None:
        self._closed = True
        self.read_ahead.stop()
        self.pictures.stop_ocr()  # a text recognition under way ends its tesseract
        if shiboken6.isValid(self._timer):  # the window may already be gone
            self._timer.stop()
        await self.live.stop(list(self.live.values()), wait_s=3.0)

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    # export ----------------------------------------------------------------------------------

    def export_conversation(self, path: Path) -> Path:
        from core.export.markdown import export_conversation

        assert self.conversation_id is not None
        return export_conversation(self.app, self.conversation_id, path)

    def export_book(self, path: Path) -> Path:
        from core.export.markdown import export_book_conversations

        assert self.book_id is not None
        return export_book_conversations(self.app, self.book_id, path)

    def _export_dialog(self, book: bool) -> None:
        if self.conversation_id is not None or (book and self.book_id is not None):
            what, export = (
                ("conversations", self.export_book)
                if book
                else ("conversation", self.export_conversation)
            )
            self.status.setText(
                export_dialog(self, what, f"{what}.md", export) or self.status.text()
            )

    # links --------------------------------------------------------------------------------

    def _link(self, url: QUrl) -> None:
        sources.follow(self, url)

    def retry(self, key: str, *, strategy: str | None = None) -> None:
        """Ask an answer's question again: the last one is replaced, an older one is re-asked."""
        view = self.messages.views.get(key)
        if view is None or self.conversation_id is None:
            return
        if view.run_id is not None and view.run_id == self.messages.last_run():
            self.ask(view.retry_text, regenerate=True, strategy=strategy)
        elif view.retry_text:
            self.ask(view.retry_text, strategy=strategy)
