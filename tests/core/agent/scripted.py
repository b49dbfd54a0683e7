"""An in-process provider that replays scripted turns: fast unit tests of the loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from core.agent.events import Usage
from core.agent.providers.base import (
    ProviderEvent,
    StreamCitation,
    StreamText,
    TurnRequest,
    TurnResult,
)
from core.errors import LLMError


class Scripted:
    name = "anthropic"
    model = "claude-sonnet-4-5"
    supports_citations = True
    bills_tokens = True

    def __init__(self, *turns: list[Any] | LLMError, delay: float = 0.0) -> None:
        self.turns = list(turns)
        self.requests: list[TurnRequest] = []
        self.delay = delay

    async def aclose(self) -> None:
        return None

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        turn = self.turns.pop(0)
        if isinstance(turn, LLMError):
            raise turn
        content: list[dict[str, Any]] = []
        stop = "end_turn"
        for item in turn:
            if self.delay:
                await asyncio.sleep(self.delay)
            if isinstance(item, str):
                yield StreamText(item)
                content.append({"type": "text", "text": item})
            elif isinstance(item, StreamCitation):
                yield item
            elif isinstance(item, dict) and item.get("type") == "tool_use":
                content.append(item)
                stop = "tool_use"
            elif isinstance(item, dict) and "stop" in item:
                stop = item["stop"]
        yield TurnResult(content, stop, Usage(10, 5, 3, 1))


def tool(name: str, tool_id: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
