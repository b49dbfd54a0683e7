"""The use case: chat with a book. One question in, a stream of events out.

``ChatWithBook.run`` persists the question before any model call, builds the prompt with the
context strategy, runs the loop strategy (tool calls persisted as they happen), and persists
the answer. It ends with exactly one terminal event. Stopping (the ``stop`` event, or
cancelling the task that consumes the stream) keeps what was written, marked "stopped", and
gives every unanswered tool call an ``is_error`` result so the next question has a valid
history.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from core.agent.context import ContextStrategy, Selection, question_content
from core.agent.eventlog import EventLog, excerpt
from core.agent.events import (
    TERMINAL_EVENTS,
    AgentEvent,
    AgentResult,
    ErrorInfo,
    Notice,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallRecord,
)
from core.agent.loop import Engine, RunState, cancelled_results, summarise_request
from core.agent.pricing import estimate_cost
from core.agent.providers.base import ChatProvider, TurnRequest, TurnResult
from core.agent.repository import ConversationRepository
from core.agent.strategies import LoopStrategy
from core.agent.tools import ToolContext, ToolOutput, ToolRegistry
from core.errors import LLMCode, LLMError, MarginError
from core.settings import AgentLimits
from core.store.library import Library

log = logging.getLogger("margin.agent")
PARTIAL_SAVE_S = 1.0


class _Recorder:
    def __init__(
        self, repo: ConversationRepository, eventlog: EventLog, conversation_id: int, run_id: int
    ) -> None:
        self.repo = repo
        self.eventlog = eventlog
        self.conversation_id = conversation_id
        self.run_id = run_id

    def assistant_turn(self, content: list[dict[str, Any]], step: int) -> None:
        self.repo.add_message(self.conversation_id, self.run_id, "assistant", "tool_use", content)

    def tool_results(self, content: list[dict[str, Any]], step: int) -> None:
        self.repo.add_message(self.conversation_id, self.run_id, "user", "tool_results", content)

    def tool_call(self, record: ToolCallRecord, detail: dict[str, Any]) -> None:
        self.repo.add_tool_call(self.run_id, record, detail)

    def llm_invocation(
        self,
        step: int,
        request: TurnRequest,
        result: TurnResult | None,
        error: str,
        duration_ms: float,
    ) -> None:
        response: dict[str, Any] = (
            {"error": error}
            if result is None
            else {
                "stop_reason": result.stop_reason,
                "text": excerpt(
                    "".join(b.get("text", "") for b in result.content if b.get("type") == "text")
                ),
                "tool_calls": [
                    {"name": b.get("name"), "input": b.get("input")}
                    for b in result.content
                    if b.get("type") == "tool_use"
                ],
            }
        )
        usage = result.usage.__dict__ if result is not None else None
        self.eventlog.write(
            "LLM_INVOCATION",
            run_id=self.run_id,
            step=step,
            request=summarise_request(request),
            response=response,
            usage=usage,
            duration_ms=round(duration_ms, 2),
        )

    def tool_log(self, record: ToolCallRecord, output: ToolOutput) -> None:
        self.eventlog.write(
            "TOOL_CALL",
            run_id=self.run_id,
            step=record.step,
            name=record.name,
            parameters=record.arguments,
            output=excerpt(output.content),
            summary=record.summary,
            is_error=record.is_error,
            duration_ms=round(record.duration_ms, 2),
        )


class ChatWithBook:
    def __init__(
        self,
        *,
        provider: ChatProvider,
        tools: ToolRegistry,
        strategy: LoopStrategy,
        context: ContextStrategy,
        repository: ConversationRepository,
        library: Library,
        limits: AgentLimits,
        spoiler_safe: bool = True,
        retry_delay: float = 1.0,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.strategy = strategy
        self.context = context
        self.repo = repository
        self.library = library
        self.limits = limits
        self.spoiler_safe = spoiler_safe
        self.retry_delay = retry_delay

    async def run(
        self,
        conversation_id: int,
        user_message: str,
        selection: Selection | None = None,
        *,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[AgentEvent]:
        if not user_message.strip():
            raise MarginError("empty_question", "Type a question first.")
        conversation = self.repo.get(conversation_id)  # BookError NOT_FOUND when missing
        book = self.library.get_book(conversation.book_id)
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        producer = asyncio.ensure_future(
            self._produce(conversation_id, book.id, user_message, selection, queue.put_nowait)
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
                waiting: set[asyncio.Future[Any]] = {getter}
                if stopper is not None and not stopper.done():
                    waiting.add(stopper)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
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

    async def _produce(
        self,
        conversation_id: int,
        book_id: int,
        text: str,
        selection: Selection | None,
        emit: Callable[[AgentEvent], None],
    ) -> None:
        book = self.library.get_book(book_id)
        bound = book.spoiler_bound if self.spoiler_safe else None
        content = question_content(text, selection)
        run_id, question_id, placeholder_id = self.repo.start_run(
            conversation_id,
            provider=self.provider.name,
            model=self.provider.model,
            strategy=self.strategy.name,
            question=content,
            question_text=text,
            selection_text=selection.text if selection else None,
            selection_page=selection.page if selection else None,
        )
        self.repo.touch(conversation_id, title_from_question=text)
        eventlog = EventLog(self.library.paths.event_logs, conversation_id)
        eventlog.write(
            "RUN_STARTED",
            run_id=run_id,
            provider=self.provider.name,
            model=self.provider.model,
            strategy=self.strategy.name,
            spoiler_bound=bound,
        )
        state = RunState()
        last_save = time.monotonic()

        def emit_and_save(event: AgentEvent) -> None:
            nonlocal last_save
            emit(event)
            if isinstance(event, TextDelta) and time.monotonic() - last_save > PARTIAL_SAVE_S:
                last_save = time.monotonic()
                self.repo.save_partial(placeholder_id, state.answer)

        recorder = _Recorder(self.repo, eventlog, conversation_id, run_id)
        engine = Engine(
            provider=self.provider,
            tools=self.tools,
            tool_context=ToolContext(self.library, book, bound, self.provider.supports_citations),
            limits=self.limits,
            recorder=recorder,
            emit=emit_and_save,
            state=state,
            retry_delay=self.retry_delay,
        )
        emit(
            RunStarted(
                run_id,
                conversation_id,
                question_id,
                self.provider.name,
                self.provider.model,
                self.strategy.name,
            )
        )

        def result(status: str, error: ErrorInfo | None, answer_id: int | None) -> AgentResult:
            cost = (
                estimate_cost(self.provider.model, state.usage)
                if self.provider.bills_tokens
                else None
            )
            return AgentResult(
                run_id=run_id,
                conversation_id=conversation_id,
                success=status == "complete",
                answer=state.answer,
                status=status,
                stop_reason=state.stop_reason,
                steps=state.step,
                usage=state.usage,
                tool_calls=tuple(state.records),
                citations=tuple(state.citations),
                error=error,
                answer_message_id=answer_id,
                user_message_id=question_id,
                limit_reached=state.limit_reached,
                estimated_cost_usd=cost,
            )

        def finish(status: str, error: ErrorInfo | None) -> int | None:
            final = state.final_content if status == "complete" else []
            if not final and state.answer:
                final = [{"type": "text", "text": state.answer}]
            elif final:
                # the stored answer replays exactly what the model said in its last turn
                final = [b for b in final if b.get("type") != "text" or b.get("text", "").strip()]
            answer_id = self.repo.finish(
                conversation_id=conversation_id,
                run_id=run_id,
                placeholder_id=placeholder_id,
                status=status,
                content=final,
                text=state.answer,
                citations=tuple(state.citations),
                steps=state.step,
                usage=state.usage,
                stop_reason=state.stop_reason or status,
                error=error,
            )
            eventlog.write(
                "RUN_FINISHED",
                run_id=run_id,
                status=status,
                steps=state.step,
                usage=state.usage.__dict__,
                error=error.__dict__ if error else None,
            )
            return answer_id

        try:
            system = self.context.system(
                book, bound=bound, selection=selection, citations=self.provider.supports_citations
            )
            stored = self.repo.stored_messages(conversation_id)
            try:
                messages = self.context.history(stored, self.limits)
                await self.strategy.run(
                    engine,
                    model=self.provider.model,
                    system=system,
                    messages=messages,
                    question=text,
                )
            except LLMError as err:
                if err.code != LLMCode.CONTEXT_TOO_LONG or state.answer or state.tool_calls:
                    raise
                emit(
                    Notice(
                        "The conversation was too long for the model; retrying with less history.",
                        state.step,
                    )
                )
                messages = self.context.history(stored, self.limits, shrink=True)
                await self.strategy.run(
                    engine,
                    model=self.provider.model,
                    system=system,
                    messages=messages,
                    question=text,
                )
            if not self.provider.supports_citations:
                engine.label_citations()
            answer_id = finish("complete", None)
            emit(RunFinished(result("complete", None, answer_id)))
        except asyncio.CancelledError:
            if state.pending_tool_uses:
                recorder.tool_results(cancelled_results(state.pending_tool_uses, set()), state.step)
            state.stop_reason = "stopped"
            answer_id = finish("stopped", None)
            emit(RunCancelled(result("stopped", None, answer_id)))
        except MarginError as err:
            info = ErrorInfo(err.code, err.message, err.hint, getattr(err, "retry_after", None))
            log.info("run %d failed: %s (%s)", run_id, err.message, err.code)
            if state.pending_tool_uses:
                recorder.tool_results(cancelled_results(state.pending_tool_uses, set()), state.step)
            answer_id = finish("failed", info)
            emit(RunFailed(result("failed", info, answer_id), info))
        except Exception:
            log.exception("run %d failed unexpectedly", run_id)
            info = ErrorInfo(
                LLMCode.UNEXPECTED.value,
                "Something unexpected went wrong while answering.",
                "Try again; the details are in the log file.",
            )
            if state.pending_tool_uses:
                recorder.tool_results(cancelled_results(state.pending_tool_uses, set()), state.step)
            answer_id = finish("failed", info)
            emit(RunFailed(result("failed", info, answer_id), info))
