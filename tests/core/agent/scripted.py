"""An in-process provider that replays scripted turns: fast unit tests of the loop.

It records each request rendered through the real wire adapter (``.messages``, ``.system``,
``.tools``, ``.tool_choice`` as the Messages API would receive them), so tests check what a
server would really be sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from core.agent.providers.anthropic import wire
from core.agent.providers.base import ProviderEvent, StreamCitation, StreamText
from core.agent.types import (
    AssistantMessage,
    AssistantPart,
    CitationRef,
    StopReason,
    TextPart,
    ToolCall,
    TurnRequest,
    TurnResult,
    Usage,
)
from core.errors import LLMError


class Scripted:
    name = "anthropic"
    model = "claude-sonnet-4-5"
    where = "the scripted server"
    supports_citations = True
    bills_tokens = True

    def __init__(self, *turns: list[Any] | LLMError, delay: float = 0.0) -> None:
        self.turns = list(turns)
        self.requests: list[Any] = []
        self.typed: list[TurnRequest] = []
        self.delay = delay

    async def aclose(self) -> None:
        return None

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        self.typed.append(request)
        rendered = wire.render_request(request, citations=self.supports_citations, model=self.model)
        self.requests.append(
            SimpleNamespace(
                messages=rendered["messages"],
                system=rendered["system"],
                tools=rendered.get("tools", []),
                tool_choice=rendered.get("tool_choice"),
            )
        )
        turn = self.turns.pop(0)
        if isinstance(turn, LLMError):
            raise turn
        parts: list[AssistantPart] = []
        stop = StopReason.END_TURN
        for item in turn:
            if self.delay:
                await asyncio.sleep(self.delay)
            if isinstance(item, str):
                yield StreamText(item)
                parts.append(TextPart(item))
            elif isinstance(item, StreamCitation):
                yield item
            elif isinstance(item, ToolCall):
                parts.append(item)
                stop = StopReason.TOOL_USE
            elif isinstance(item, dict) and "stop" in item:
                stop = StopReason(item["stop"])
        yield TurnResult(AssistantMessage(tuple(parts)), stop, Usage(10, 5, 3, 1))


def tool(name: str, tool_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(tool_id, name, arguments)


def cite(book_id: int, first: int, last: int, quote: str) -> StreamCitation:
    return StreamCitation(CitationRef(book_id, first, last, quote))
