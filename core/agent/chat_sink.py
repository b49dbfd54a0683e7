"""What one chat run reports as it goes (``ChatSink``, the loop's ``RunSink``): each event to
the consumer, the answer so far saved every ``PARTIAL_SAVE_S`` seconds, each turn and tool
call as rows of the conversation, and the spoiler checks, tool calls and model calls as lines
of the event log. ``ChatWithBook`` (core/agent/chat.py) makes one per run, giving it the
conversations and its way of running database work."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from core.agent.eventlog import EventLog, excerpt
from core.agent.events import AgentEvent, SpoilerHidden, TextDelta, ToolCallRecord
from core.agent.loop import RunState, summarise_request
from core.agent.tools import ToolOutput
from core.agent.types import AssistantMessage, TurnRequest, TurnResult, UserMessage
from core.agent.waiting import given_passages
from core.store.conversations import Conversations, RunIds

log = logging.getLogger("margin.agent")
PARTIAL_SAVE_S = 1.0


class ChatSink:
    """The loop's reports: events to the consumer, rows to the store, lines to the event log."""

    def __init__(
        self,
        conversations: Conversations,
        db: Callable[..., Awaitable[Any]],
        emit: Callable[[AgentEvent], None],
    ) -> None:
        """``db(fn, *args)`` runs database work on the database threads (``ChatWithBook.db``)."""
        self.conversations = conversations
        self.db = db
        self._emit = emit
        self.conversation_id = 0
        self.ids: RunIds | None = None
        self.eventlog: EventLog | None = None
        self.state: RunState | None = None
        self._last_save = time.monotonic()
        self._saves: set[asyncio.Future[Any]] = set()
        self._logged: set[tuple[int, int, str]] = set()  # passages already in the event log

    def emit(self, event: AgentEvent) -> None:
        self._emit(event)
        if isinstance(event, SpoilerHidden) and self.eventlog is not None and self.ids:
            self.eventlog.write(
                "SPOILER_CHECK",
                run_id=self.ids.run_id,
                step=event.step,
                hidden=event.withheld.index,
                read_to=event.withheld.read_to,
                terms=[{"term": t, "first_page": p} for t, p in event.withheld.terms],
            )
        if (
            isinstance(event, TextDelta)
            and self.ids is not None
            and self.state is not None
            and time.monotonic() - self._last_save > PARTIAL_SAVE_S
        ):
            self._last_save = time.monotonic()
            future = asyncio.ensure_future(
                self.db(self.conversations.save_partial, self.ids.placeholder_id, self.state.answer)
            )
            self._saves.add(future)
            future.add_done_callback(self._saved)

    def _saved(self, future: asyncio.Future[Any]) -> None:
        self._saves.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.warning("partial answer not saved: %s", future.exception())

    async def assistant_turn(self, message: AssistantMessage, step: int) -> None:
        await self._add("tool_use", message)

    async def tool_results(self, message: UserMessage, step: int) -> None:
        await self._add("tool_results", message)

    async def _add(self, kind: str, message: AssistantMessage | UserMessage) -> None:
        assert self.ids is not None
        await self.db(
            self.conversations.add_message,
            self.conversation_id,
            self.ids.run_id,
            kind,
            message,
        )

    async def tool_call(self, record: ToolCallRecord, output: ToolOutput) -> None:
        assert self.ids is not None
        from core.agent.types import part_to_json

        await self.db(
            self.conversations.add_tool_call,
            self.ids.run_id,
            record,
            {**output.detail, "pages": list(output.pages)},
            [part_to_json(p) for p in output.passages],
        )
        if self.eventlog is not None:
            self.eventlog.write(
                "TOOL_CALL",
                run_id=self.ids.run_id,
                step=record.step,
                name=record.name,
                parameters=record.arguments,
                output=excerpt([part_to_json(p) for p in output.parts]),
                summary=record.summary,
                is_error=record.is_error,
                duration_ms=round(record.duration_ms, 2),
            )

    def invocation(
        self, step: int, request: TurnRequest, result: TurnResult | None, error: str, ms: float
    ) -> None:
        if self.eventlog is None or self.ids is None:
            return
        response: dict[str, Any] = (
            {"error": error}
            if result is None
            else {
                "stop_reason": result.stop_reason.value,
                "text": excerpt(result.message.text),
                "tool_calls": [
                    {"name": c.name, "input": dict(c.arguments)} for c in result.message.calls
                ],
            }
        )
        # the passages as the model got them, with their pages (each once per run)
        given = []
        for p in given_passages(request.messages):
            key = (p.first_page, p.last_page, p.text)
            if key not in self._logged:
                self._logged.add(key)
                given.append({"first_page": p.first_page, "last_page": p.last_page, "text": p.text})
        self.eventlog.write(
            "LLM_INVOCATION",
            run_id=self.ids.run_id,
            step=step,
            request=summarise_request(request),
            passages=given,
            response=response,
            usage=result.usage.__dict__ if result is not None else None,
            duration_ms=round(ms, 2),
        )
