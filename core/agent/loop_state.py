"""What the agent loop decides from and reports to: the stop table, a run's state, the sink.

``core.agent.loop`` runs the turns; this module holds the data it works on, so the loop's
text path (``loop_text``) and its tool runner (``loop_tools``) share it without importing
the loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from core.agent import repetition
from core.agent.events import AgentEvent, ToolCallRecord
from core.agent.providers.base import ChatProvider
from core.agent.tools import ToolContext, ToolOutput
from core.agent.types import (
    AssistantMessage,
    CitationRef,
    Message,
    Passage,
    StopReason,
    ToolCall,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    Withheld,
)

LIMIT_NOTES = {
    "turns": "the limit of steps for one question",
    "tool_calls": "the limit of tool calls for one question",
    "deadline": "the time limit for one question",
}
STOPPED_RESULT = "Stopped by the reader before this ran."


class Next(Enum):
    DONE = "done"
    TOOLS = "tools"
    CONTINUE = "continue"


@dataclass(frozen=True)
class StopRule:
    next: Next
    note: str = ""  # added to the answer for the reader
    notice: str = ""  # told to the reader while it happens


# What happens after a turn, for every stop reason the API defines (a test checks that this
# table covers the SDK's list).
STOP_TABLE: Mapping[StopReason, StopRule] = {
    StopReason.END_TURN: StopRule(Next.DONE),
    StopReason.STOP_SEQUENCE: StopRule(Next.DONE),
    StopReason.TOOL_USE: StopRule(Next.TOOLS),
    StopReason.PAUSE_TURN: StopRule(Next.CONTINUE),
    StopReason.MAX_TOKENS: StopRule(
        Next.DONE,
        "\n\n*(The answer was cut short: it reached the length limit.)*",
        "The answer reached its length limit and was cut.",
    ),
    StopReason.CONTEXT_WINDOW: StopRule(
        Next.DONE,
        "\n\n*(The answer was cut short: the conversation filled the model's memory.)*",
        "The conversation is too long for the model; start a new one for long answers.",
    ),
    StopReason.REFUSAL: StopRule(
        Next.DONE,
        "The model declined to answer this question.",
        "The model declined to answer this question.",
    ),
}


# Not a stop reason of the API: Margin closed the stream of an answer that looped.
REPEATING = StopRule(Next.DONE, repetition.NOTE, repetition.NOTICE)
REPETITION_STOP = repetition.STOP_REASON


@dataclass
class RunState:
    """Everything a run has produced so far (read when it ends, however it ends)."""

    step: int = 0
    turns: int = 0
    tool_calls: int = 0
    texts: list[str] = field(default_factory=list)  # text of every turn, in order
    citations: list[CitationRef] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)  # every passage the tools returned
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    limit_reached: str = ""
    final: AssistantMessage = field(default_factory=lambda: AssistantMessage(()))
    withheld: list[Withheld] = field(default_factory=list)
    pending_calls: tuple[ToolCall, ...] = ()
    started: float = field(default_factory=time.monotonic)
    repeating: bool = False  # the answer looped and its stream was closed

    @property
    def answer(self) -> str:
        return "".join(self.texts).strip()


class RunSink(Protocol):
    """Where the loop reports what happens, as it happens (persistence, event log, events)."""

    def emit(self, event: AgentEvent) -> None: ...

    async def assistant_turn(self, message: AssistantMessage, step: int) -> None: ...

    async def tool_results(self, message: UserMessage, step: int) -> None: ...

    async def tool_call(self, record: ToolCallRecord, output: ToolOutput) -> None: ...

    def invocation(
        self, step: int, request: TurnRequest, result: TurnResult | None, error: str, ms: float
    ) -> None: ...


class StrategyLoop(Protocol):
    """What a strategy uses of the loop (``core.agent.loop.AgentLoop``) before the first
    turn: the book, the model, a hidden turn, and tool calls."""

    ctx: ToolContext
    model: str
    provider: ChatProvider
    local_reading: str  # a local model's passages: "speed" or "breadth"

    @property
    def provider_supports_citations(self) -> bool: ...

    async def turn(
        self, request: TurnRequest, *, visible: bool = True, grace: float = 0.0
    ) -> TurnResult: ...

    async def run_tool_calls(
        self, calls: list[tuple[str, Mapping[str, Any]]]
    ) -> list[ToolOutput]: ...


class Strategy(Protocol):
    name: str
    uses_tools: bool

    async def prepare(self, loop: StrategyLoop, messages: list[Message]) -> list[Message]:
        """The messages of the first turn (a strategy may search first)."""
        ...


async def close_stream(stream: Any) -> None:
    """Close a provider's stream (an async generator) now, in this task: the connection
    closes with it."""
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        await closer()


def summarise_request(request: TurnRequest) -> dict[str, Any]:
    """What the event log keeps of a request: shape, not the whole book text."""
    last = request.messages[-1] if request.messages else None
    question = last.question if isinstance(last, UserMessage) else None
    return {
        "model": request.model,
        "messages": len(request.messages),
        "tools": [t.name for t in request.tools],
        "tool_choice": request.tool_choice,
        "system_chars": len(request.system),
        "max_tokens": request.max_tokens,
        "last_user_text": (question.for_model[:300] if question else ""),
    }
