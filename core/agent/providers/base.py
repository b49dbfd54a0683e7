"""What the loop needs from a model server: stream one turn, end with the whole message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.agent.events import Usage


@dataclass(frozen=True)
class TurnRequest:
    model: str
    system: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 4096
    tool_choice: dict[str, Any] | None = None


@dataclass(frozen=True)
class StreamText:
    text: str


@dataclass(frozen=True)
class StreamCitation:
    source: str
    title: str
    cited_text: str


@dataclass(frozen=True)
class TurnResult:
    """The complete assistant message: content blocks as the API takes them back."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage


ProviderEvent = StreamText | StreamCitation | TurnResult


class ChatProvider(Protocol):
    name: str  # "anthropic" | "local" | "passages"
    model: str
    supports_citations: bool  # search_result blocks with citations
    bills_tokens: bool  # whether a cost estimate makes sense

    def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        """Yield text and citations as they arrive, then exactly one ``TurnResult``.
        Failures raise ``LLMError``."""
        ...

    async def aclose(self) -> None: ...
