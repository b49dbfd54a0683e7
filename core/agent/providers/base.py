"""What the loop needs from a model server: stream one turn, end with the whole message.

Requests and results are typed (``core.agent.types``); each provider renders them to its own
API and parses the replies back. Retries of failed requests belong to the provider (the
SDK retries HTTP errors itself); the loop never retries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from core.agent.types import CitationRef, TurnRequest, TurnResult

__all__ = [
    "ChatProvider",
    "ProviderEvent",
    "StreamCitation",
    "StreamRetry",
    "StreamText",
    "TurnRequest",
    "TurnResult",
]


@dataclass(frozen=True)
class StreamText:
    text: str


@dataclass(frozen=True)
class StreamCitation:
    citation: CitationRef


@dataclass(frozen=True)
class StreamRetry:
    """The provider is trying the turn again (nothing was shown yet); for the reader."""

    notice: str


ProviderEvent = StreamText | StreamCitation | StreamRetry | TurnResult


class ChatProvider(Protocol):
    name: str  # "anthropic" | "local" | "passages"
    model: str
    where: str  # for people: "Claude's API", "the local server at http://…"
    supports_citations: bool  # the server cites passages itself (else [p. N] labels)
    bills_tokens: bool  # whether a cost estimate makes sense

    def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        """Yield text and citations as they arrive, then exactly one ``TurnResult``.
        Failures raise ``LLMError``."""
        ...

    async def aclose(self) -> None: ...
