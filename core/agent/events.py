"""Typed events of one agent run. The CLI prints them; the window renders them.

All are frozen dataclasses with no Qt. A run yields, in order: ``RunStarted``, then per model
turn ``TurnStarted`` followed by ``TextDelta``/``ToolStarted``/``ToolFinished``/``Citation``/
``UsageReport``/``Notice`` events, and ends with exactly one of ``RunFinished``,
``RunFailed`` or ``RunCancelled``, each carrying the ``AgentResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.domain.messages import CitationRef, ErrorInfo, Passage, ToolCallRecord, Usage, Withheld


@dataclass(frozen=True)
class AgentResult:
    run_id: int
    conversation_id: int
    success: bool
    answer: str
    status: str  # complete | stopped | failed
    stop_reason: str
    steps: int
    usage: Usage = field(default_factory=Usage)
    tool_calls: tuple[ToolCallRecord, ...] = ()
    citations: tuple[CitationRef, ...] = ()
    error: ErrorInfo | None = None
    answer_message_id: int | None = None
    user_message_id: int | None = None
    limit_reached: str = ""  # "", "turns", "tool_calls", "deadline"
    estimated_cost_usd: float | None = None
    passages: tuple[Passage, ...] = ()  # every passage the tools returned
    withheld: tuple[Withheld, ...] = ()  # sentences the spoiler check held back


@dataclass(frozen=True)
class RunStarted:
    run_id: int
    conversation_id: int
    user_message_id: int
    provider: str
    model: str
    strategy: str


@dataclass(frozen=True)
class TurnStarted:
    step: int


@dataclass(frozen=True)
class TextDelta:
    text: str
    step: int


@dataclass(frozen=True)
class ToolStarted:
    tool_use_id: str
    name: str
    arguments: dict[str, Any]
    step: int
    description: str = ""  # for people: "Searching the book for 'the Cheshire Cat'"


@dataclass(frozen=True)
class ToolFinished:
    tool_use_id: str
    name: str
    duration_ms: float
    summary: str  # for people: "5 passages", "pages 40–42"
    is_error: bool
    step: int
    pages: tuple[int, ...] = ()  # pages returned or read, for the answer's sources
    detail: dict[str, Any] = field(default_factory=dict)
    passages: tuple[Passage, ...] = ()  # the book text the tool returned


@dataclass(frozen=True)
class Citation:
    citation: CitationRef
    step: int


@dataclass(frozen=True)
class SpoilerHidden:
    """A sentence the spoiler check held back; the answer's text carries ``marker(index)``
    where it was (``core.agent.answer`` turns markers into notices or the hidden text)."""

    withheld: Withheld
    step: int


@dataclass(frozen=True)
class UsageReport:
    usage: Usage
    step: int


@dataclass(frozen=True)
class Notice:
    """Something the reader should know mid-run (a retry, a limit reached, history shrunk)."""

    text: str
    step: int


@dataclass(frozen=True)
class RunFinished:
    result: AgentResult


@dataclass(frozen=True)
class RunFailed:
    result: AgentResult
    error: ErrorInfo


@dataclass(frozen=True)
class RunCancelled:
    result: AgentResult


AgentEvent = (
    RunStarted
    | TurnStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | Citation
    | SpoilerHidden
    | UsageReport
    | Notice
    | RunFinished
    | RunFailed
    | RunCancelled
)
TERMINAL_EVENTS = (RunFinished, RunFailed, RunCancelled)
