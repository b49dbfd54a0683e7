"""The use case: chat with a book. One question in, a stream of events out.

``ChatWithBook.run`` persists the question before any model call, builds the prompt, runs
the loop and persists the answer. Whatever happens (a failure saving the question, a book
deleted mid-answer, a full disk) it ends with exactly one terminal event (``_close``).
Stopping keeps what was written, marked "stopped", and gives every unanswered tool call an
``is_error`` result. Database work runs on the database threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, TypeVar

from core.agent.answer import for_model
from core.agent.bare import offer_passages
from core.agent.chat_sink import PARTIAL_SAVE_S, ChatSink
from core.agent.context import ContextStrategy, earlier_turns
from core.agent.eventlog import EventLog
from core.agent.events import (
    TERMINAL_EVENTS,
    AgentEvent,
    AgentResult,
    ErrorInfo,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
)
from core.agent.loop import AgentLoop, RunState, Strategy
from core.agent.pricing import estimate_cost
from core.agent.providers.base import ChatProvider
from core.agent.spoiler_verify import SupportVerifier
from core.agent.spoilers import SpoilerGuard, SpoilerIndex, SpoilerIndexCache
from core.agent.tools import ToolBox, ToolContext
from core.agent.types import (
    AssistantMessage,
    Message,
    Question,
    Selection,
    TextPart,
    UserMessage,
)
from core.errors import LLMCode, MarginError
from core.search import BookSearch
from core.search.vector_indexer import want_soon
from core.settings import AgentLimits
from core.store import reserve
from core.store.conversations import Conversations, RunIds
from core.store.db import explain as explain_storage
from core.store.history import StoredMessage
from core.store.library import BookInfo, Library

log = logging.getLogger("margin.agent")
T = TypeVar("T")
_Sink = ChatSink  # its name before it had a module of its own
__all__ = ["PARTIAL_SAVE_S", "ChatSink", "ChatWithBook"]


class ChatWithBook:
    def __init__(
        self,
        *,
        provider: ChatProvider,
        tools: ToolBox,
        strategy: Strategy,
        context: ContextStrategy,
        conversations: Conversations,
        library: Library,
        search: BookSearch,
        limits: AgentLimits,
        event_logs: Path,
        spoiler_safe: bool = True,
        executor: Executor | None = None,
        spoiler_cache: SpoilerIndexCache | None = None,
        spoiler_verify: bool = True,
        local_reading: str = "speed",
    ) -> None:
        self.local_reading = local_reading
        self.spoiler_cache = spoiler_cache
        self.spoiler_verify = spoiler_verify  # a model call verifies doubtful sentences
        self.provider = provider
        self.tools = tools
        self.strategy = strategy
        self.context = context
        self.conversations = conversations
        self.library = library
        self.search = search
        self.limits = limits
        self.event_logs = event_logs
        self.spoiler_safe = spoiler_safe
        self.executor = executor
        self._reserved = False  # the disk space kept in reserve was made (``core.store.reserve``)

    async def db(self, fn: Callable[..., T], /, *args: Any) -> T:
        """Run database work on the database threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args))

    async def run(
        self,
        conversation_id: int,
        question: Question | str,
        selection: Selection | None = None,
        *,
        stop: asyncio.Event | None = None,
        spoilers_until: int | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Answer ``question``. ``spoilers_until``: for this question only, the reader does
        not mind spoilers up to that page (past the last page: the whole book)."""
        if isinstance(question, str):
            question = Question(question, selection)
        if not question.text.strip():
            raise MarginError("empty_question", "Type a question first.")
        conversation = await self.db(self.conversations.get, conversation_id)  # or BookError
        want_soon(self.search.db, conversation.book_id)  # deep search's vectors, from now
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        producer = asyncio.ensure_future(
            self._produce(conversation_id, question, queue.put_nowait, spoilers_until)
        )
        stopper = asyncio.ensure_future(stop.wait()) if stop is not None else None
        stop_sent = False
        started = False  # a producer cancelled before its first step could not report it
        try:
            while True:
                if started and stopper is not None and stopper.done() and not stop_sent:
                    stop_sent = True
                    producer.cancel()  # Stop: the producer persists and reports RunCancelled
                getter = asyncio.ensure_future(queue.get())
                waiting: set[asyncio.Future[Any]] = {getter, producer}
                if stopper is not None and not stopper.done():
                    waiting.add(stopper)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    if producer.done() and queue.empty():
                        # the producer ended without a terminal event: never hang the reader
                        yield self._lost(conversation_id, producer)
                        return
                    continue
                event = getter.result()
                started = True
                yield event
                if isinstance(event, TERMINAL_EVENTS):
                    return
        finally:
            if stopper is not None:
                stopper.cancel()
            if not producer.done():
                producer.cancel()
                try:
                    await asyncio.shield(producer)
                except BaseException:
                    pass

    def _lost(self, conversation_id: int, producer: asyncio.Future[Any]) -> RunFailed:
        exc = None if producer.cancelled() else producer.exception()
        if exc is not None:
            log.error("answer ended without a result", exc_info=exc)
        info = ErrorInfo(
            LLMCode.UNEXPECTED.value,
            "Something unexpected went wrong while answering.",
            "Try again; the details are in the log file.",
        )
        result = AgentResult(0, conversation_id, False, "", "failed", "failed", 0, error=info)
        return RunFailed(result, info)

    async def _produce(
        self,
        conversation_id: int,
        question: Question,
        emit: Callable[[AgentEvent], None],
        spoilers_until: int | None = None,
    ) -> None:
        sink = ChatSink(self.conversations, self.db, emit)
        sink.conversation_id = conversation_id
        loop: AgentLoop | None = None
        status, error = "complete", None
        try:
            # the database in as few trips as it can (each waits for the window's thread)
            book, bound, index = await self.db(self._prepare, conversation_id, spoilers_until)
            guard = None
            verifier = None
            if index is not None and bound is not None:
                sel = question.selection
                guard = SpoilerGuard(
                    index,
                    read_to=bound,
                    question=question.text,
                    selection=sel.text if sel else "",
                    selection_page=sel.page if sel else None,
                )
                if self.spoiler_verify:
                    verifier = SupportVerifier(self.provider, guard, question.text)
            ids = await self.db(self._start_run, conversation_id, question)
            sink.ids = ids
            sink.eventlog = EventLog(self.event_logs, conversation_id)
            sink.eventlog.write(
                "RUN_STARTED",
                run_id=ids.run_id,
                provider=self.provider.name,
                model=self.provider.model,
                strategy=self.strategy.name,
                spoiler_bound=bound,
            )
            loop = AgentLoop(
                provider=self.provider,
                tools=self.tools,
                ctx=ToolContext(self.library, self.search, book, bound),
                limits=self.limits,
                sink=sink,
                model=self.provider.model,
                system=self.context.system(
                    book,
                    bound=bound,
                    selection=question.selection,
                    citations=self.provider.supports_citations,
                ),
                guard=guard,
                verifier=verifier,
                local_reading=self.local_reading,
            )
            sink.state = loop.state
            emit(
                RunStarted(
                    ids.run_id,
                    conversation_id,
                    ids.question_id,
                    self.provider.name,
                    self.provider.model,
                    self.strategy.name,
                )
            )
            stored, facts = await self.db(self._earlier, conversation_id)
            earlier = earlier_turns(stored, facts, ids.run_id, self.provider.name)
            history = self.context.history(earlier, self.limits, bound=bound)

            def shorter() -> list[Message]:
                return self.context.history(earlier, self.limits, bound=bound, shrink=True)

            await loop.run(
                self.strategy, history, UserMessage((question,)), shorter_history=shorter
            )
            if not self.provider.supports_citations:
                loop.label_citations(question.text)
            if self.provider.name != "passages":
                await offer_passages(loop, question)  # an answer with no words
        except asyncio.CancelledError:
            status = "stopped"
        except MarginError as err:
            status = "failed"
            error = ErrorInfo(err.code, err.message, err.hint, getattr(err, "retry_after", None))
            log.info("answer failed: %s (%s)", err.message, err.code)
        except Exception as exc:
            status = "failed"
            if (known := explain_storage(exc)) is not None:  # busy, disk full, damaged
                log.warning("answer failed: %s", known.message, exc_info=exc)
                error = ErrorInfo(known.code, known.message, known.hint)
            else:
                log.exception("answer failed unexpectedly")
                error = ErrorInfo(
                    LLMCode.UNEXPECTED.value,
                    "Something unexpected went wrong while answering.",
                    "Try again; the details are in the log file.",
                )
        await self._close(sink, loop, status, error, emit)

    def _book_of(self, conversation_id: int) -> BookInfo:
        return self.library.get_book(self.conversations.get(conversation_id).book_id)

    def _prepare(
        self, conversation_id: int, spoilers_until: int | None
    ) -> tuple[BookInfo, int | None, SpoilerIndex | None]:
        """On a database thread: the book, the spoiler bound of this answer, the spoiler
        check's index when there is one to check, and the disk reserve (once)."""
        book = self._book_of(conversation_id)
        bound = book.spoiler_bound if self.spoiler_safe else None
        if bound is not None and spoilers_until is not None:
            bound = None if spoilers_until >= book.page_count else max(bound, spoilers_until)
        index = None
        # Passages mode writes nothing of a model's: its framing is the app's own words
        # and its quotes come from pages within the bound, so there is nothing to check.
        checked = self.provider.name != "passages"
        if bound is not None and self.spoiler_cache is not None and checked:
            index = self.spoiler_cache.get(self.library.db, book.id)
        if not self._reserved:  # room to save an answer the disk fills during
            self._reserved = True
            reserve.ensure(self.library.paths.data)
        return book, bound, index

    def _start_run(self, conversation_id: int, question: Question) -> RunIds:
        ids = self.conversations.start_run(
            conversation_id,
            provider=self.provider.name,
            model=self.provider.model,
            strategy=self.strategy.name,
            question=question,
        )
        self.conversations.touch(conversation_id, title_from_question=question.text)
        return ids

    def _earlier(
        self, conversation_id: int
    ) -> tuple[list[StoredMessage], dict[int, tuple[str, str, str]]]:
        return (
            self.conversations.stored_messages(conversation_id),
            self.conversations.run_facts(conversation_id),
        )

    async def _close(
        self,
        sink: ChatSink,
        loop: AgentLoop | None,
        status: str,
        error: ErrorInfo | None,
        emit: Callable[[AgentEvent], None],
    ) -> None:
        """The one place a run ends: persist the outcome, log it, emit the terminal event."""
        state = loop.state if loop is not None else RunState()
        if loop is not None:
            await loop.flush_text()
        if status == "stopped":
            state.stop_reason = "stopped"
        answer_id: int | None = None
        ids = sink.ids
        if ids is not None:
            try:
                if loop is not None and (pending := loop.unanswered_results()) is not None:
                    await sink.tool_results(pending, state.step)
                final = state.final if status == "complete" else AssistantMessage(())
                if not final.parts and state.answer:
                    final = AssistantMessage((TextPart(for_model(state.answer)), *state.withheld))
                save = functools.partial(
                    self.conversations.finish,
                    conversation_id=sink.conversation_id,
                    ids=ids,
                    message=final,
                    text=state.answer,
                    citations=tuple(state.citations),
                    steps=state.step,
                    usage=state.usage,
                    passages=tuple(state.passages),
                )
                answer_id = await self.db(
                    functools.partial(
                        save, status=status, stop_reason=state.stop_reason or status, error=error
                    )
                )
            except asyncio.CancelledError:
                log.warning("closing run %d was cancelled", ids.run_id)
            except Exception as exc:
                log.exception("could not save the outcome of run %d", ids.run_id)
                known = explain_storage(exc)
                if known is not None and known.code == "disk_full":
                    # the reserve given back: what arrived is saved, or the run says it was
                    # lost to the full disk (a restarted window says so, not "closed")
                    status = "failed"
                    answer_id, error = await self.db(
                        reserve.save_when_full,
                        self.library.paths.data,
                        lambda kept: save(status="failed", stop_reason="disk_full", error=kept),
                        functools.partial(self.conversations.mark_unsaved, ids),
                    )
                elif error is None:
                    status = "failed"
                    error = (
                        ErrorInfo(known.code, known.message, known.hint)
                        if known is not None
                        else ErrorInfo(
                            "storage",
                            "The answer could not be saved to the library.",
                            "Check that the disk is not full; the details are in the log file.",
                        )
                    )
                del exc
            if sink.eventlog is not None:
                sink.eventlog.write(
                    "RUN_FINISHED",
                    run_id=ids.run_id,
                    status=status,
                    steps=state.step,
                    usage=state.usage.__dict__,
                    error=error.__dict__ if error else None,
                )
        cost = (
            estimate_cost(self.provider.model, state.usage) if self.provider.bills_tokens else None
        )
        result = AgentResult(
            run_id=ids.run_id if ids else 0,
            conversation_id=sink.conversation_id,
            success=status == "complete",
            answer=state.answer,
            status=status,
            stop_reason=state.stop_reason or status,
            steps=state.step,
            usage=state.usage,
            tool_calls=tuple(state.records),
            citations=tuple(state.citations),
            error=error,
            answer_message_id=answer_id,
            user_message_id=ids.question_id if ids else None,
            limit_reached=state.limit_reached,
            estimated_cost_usd=cost,
            passages=tuple(state.passages),
            withheld=tuple(state.withheld),
        )
        if status == "complete":
            emit(RunFinished(result))
        elif status == "stopped":
            emit(RunCancelled(result))
        else:
            assert error is not None
            emit(RunFailed(result, error))
