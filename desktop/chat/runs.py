"""The answers being written: one ``LiveRun`` per conversation, each an asyncio task that folds
the core's events into an ``AnswerState``. Switching book or conversation never loses one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import shiboken6

from core.agent.answer import AnswerState, notice_text
from core.agent.events import AgentEvent, SpoilerHidden, TextDelta
from core.agent.types import Question, Selection
from core.errors import MarginError
from desktop import accessibility
from desktop.accessibility import announce, first_sentence, plain_text
from desktop.chat import history
from desktop.chat.header import budget_allows
from desktop.events import ConversationChanged
from desktop.requests import AskRequest
from desktop.tasks import run_blocking

if TYPE_CHECKING:
    from desktop.chat.pane import ChatPane


def outcome(view: AnswerState, error: str = "", whole: bool = False) -> tuple[str, bool]:
    """What a screen reader says when an answer ends, and whether it interrupts (a failure
    does): "Answer ready:" and the answer's first sentence (its whole text with ``whole``),
    or that it stopped or failed."""
    if view.status == "complete":
        lead = plain_text(view.text) if whole else first_sentence(view.text)
        return (f"Answer ready: {lead}" if lead else "Answer ready."), False
    if view.status == "stopped":
        return "Answer stopped.", False
    if view.status in ("failed", "interrupted"):
        reason = error or (view.error.message if view.error is not None else "")
        return (f"The answer failed: {reason}" if reason else "The answer failed."), True
    return "", False


BUSY = (
    "An answer is still being written here. Press Esc to stop it, or Ctrl+N to ask in a new "
    "conversation."
)


@dataclass
class LiveRun:
    conversation_id: int
    question: str
    selection_text: str | None
    selection_page: int | None
    view: AnswerState
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    failure: str = ""  # why it failed when nothing was stored
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


class LiveRuns(dict[int, LiveRun]):
    """The running answers by conversation id."""

    def chosen(
        self,
        conversation_id: int | None,
        book_id: int | None,
        book_of: Callable[[int], int | None],
    ) -> list[LiveRun]:
        """The runs in one conversation, or about one book (``book_of`` names a
        conversation's book, ``None`` when it is gone)."""
        out = []
        for live in list(self.values()):
            if conversation_id is not None and live.conversation_id != conversation_id:
                continue
            if book_id is not None and book_of(live.conversation_id) != book_id:
                continue
            out.append(live)
        return out

    def by_key(self, key: str) -> LiveRun | None:
        return next((r for r in self.values() if r.key == key), None)

    async def stop(self, runs: list[LiveRun], wait_s: float = 5.0) -> None:
        """Ask ``runs`` to stop and wait (bounded) until they have saved what they wrote."""
        for live in runs:
            live.stop.set()
        tasks = [live.task for live in runs if live.task is not None and not live.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=wait_s)


class Answering:
    """Starts an answer in a conversation, folds the core's events into its ``AnswerState``
    (the pane's timer repaints it) and closes it out: the stored messages replace the live
    frames. Holds the pane for what it shows."""

    def __init__(self, pane: ChatPane) -> None:
        self.pane = pane
        self.live = LiveRuns()

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
        """Start an answer in the pane's conversation (the book's newest, or a new one when
        there is none). With ``elsewhere_if_busy`` a conversation that is answering hands the
        question to an empty one instead of refusing it."""
        pane, service, book_id = self.pane, self.pane.service, self.pane.book_id
        if book_id is None:
            return None
        if selection is not None and not regenerate:  # a passage: its thread (core.store.anchors)
            thread = pane.app.conversations.thread_for(
                book_id, selection.text, selection.page, near=selection.near
            )
            if thread.id != pane.conversation_id:
                pane.select_conversation(thread.id)
            pane.events.publish(ConversationChanged(book_id))
        if pane.conversation_id is None:
            items = service.list_conversations(book_id)
            conv_id = items[0].id if items else service.create_conversation(book_id).id
            pane.select_conversation(conv_id)
        if (
            pane.conversation_id in self.live
            and elsewhere_if_busy
            and not regenerate
            and selection is None  # a passage's question belongs in its thread
        ):
            idle = history.idle_conversation(service, book_id, self.live)
            pane.select_conversation(idle or service.create_conversation(book_id).id)
        conversation_id = pane.conversation_id
        assert conversation_id is not None
        if conversation_id in self.live:
            pane.status.setText(BUSY)
            return None
        refused = budget_allows(pane, service, book_id)
        if refused is not None:
            pane.status.setText(refused)
            return None
        sel = Selection(selection.text, selection.page) if selection is not None else None
        if regenerate:
            last = service.last_question(conversation_id)
            if last is None:
                return None
            text, sel = last.text, last.selection
        live = LiveRun(
            conversation_id,
            text,
            sel.text if sel else None,
            sel.page if sel else None,
            AnswerState(key=f"live-{conversation_id}", status="running", retry_text=text),
        )
        self.live[conversation_id] = live
        pane.clear_selection()
        pane.status.setText("")
        if regenerate:
            events = service.regenerate(conversation_id, strategy=strategy, stop=live.stop)
            pane.messages.drop_last_run()
        else:
            events = service.ask(
                conversation_id,
                Question(text, sel, prompt),
                strategy=strategy,
                stop=live.stop,
                spoilers_until=spoilers_until,
            )
        live.task = pane.tasks.start(self._consume(live, events), key=f"chat:{conversation_id}")
        pane.running_changed()
        pane.refresh_titles()
        if live.conversation_id == pane.conversation_id:
            pane.messages.show_live(live)
        return conversation_id

    async def _consume(self, live: LiveRun, events: AsyncIterator[AgentEvent]) -> None:
        pane, view = self.pane, live.view
        try:
            async for event in events:
                view.apply(event)
                pane.dirty = True
                if isinstance(event, SpoilerHidden):
                    announce(pane, f"A sentence was held back. {notice_text(event.withheld)}.")
                if isinstance(event, TextDelta) and live.first_text_at is None:
                    live.first_text_at = time.perf_counter()
                    announce(pane, "The answer is arriving.")
                    pane.tick()  # the first words show at once
        except MarginError as exc:
            # nothing was persisted (for example the conversation was deleted): keep the text
            view.status = "failed"
            view.error = None
            live.failure = str(exc)
            if shiboken6.isValid(pane.status):
                pane.status.setText(str(exc))
                if not pane.input.toPlainText().strip():
                    pane.input.setPlainText(live.question)
        finally:
            await self._close_out(live)

    def chosen(self, conversation_id: int | None, book_id: int | None) -> list[LiveRun]:
        """The answers being written in one conversation, or about one book."""

        def book_of(conversation: int) -> int | None:
            try:
                return int(self.pane.service.get_conversation(conversation).book_id)
            except MarginError:
                return None

        return self.live.chosen(conversation_id, book_id, book_of)

    def _gone(self) -> bool:
        return not (shiboken6.isValid(self.pane) and shiboken6.isValid(self.pane.stop_button))

    async def _close_out(self, live: LiveRun) -> None:
        """The answer ended: show its final state at once, read the stored messages on a
        worker thread, then turn the live frames into them."""
        pane = self.pane
        loaded: history.Loaded | None = None
        if self._gone():
            self.live.pop(live.conversation_id, None)  # the window is gone
            return
        said, urgent = outcome(live.view, live.failure, accessibility.whole_answers)
        announce(pane, said, assertive=urgent)
        if live.conversation_id == pane.conversation_id and live.view.run_id is not None:
            pane.messages.paint_live(live)
            try:
                loaded = await run_blocking(
                    history.read, pane.service, pane.book_id, live.conversation_id, False
                )
            except (MarginError, RuntimeError):
                loaded = None
        self.live.pop(live.conversation_id, None)
        if self._gone():
            return
        pane.running_changed()
        pane.refresh_titles()  # titles come from the first question
        if live.conversation_id == pane.conversation_id:
            pane.loaded()  # what was read before this answer ended is older than this
            if loaded is None or loaded.conversation_id != live.conversation_id:
                pane.redraw()  # nothing stored (the error is in the status line)
            else:
                pane.messages.finish_live(live, loaded.shown)
                pane.cost.setText(loaded.cost)
        pane.answerRendered.emit(live.conversation_id)
