"""What the agent deals in: the messages of a conversation (``core.domain.messages``, which
the store persists too) and, here, what only the agent uses: one model turn's request and
result (``TurnRequest``, ``TurnResult``, ``ToolSpec``) and why a turn ended (``StopReason``).

The agent's modules import every one of these names from here; only a provider adapter
(``providers/anthropic/wire.py``) renders them to a model's API and parses its replies back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.domain.messages import (
    AssistantMessage,
    AssistantPart,
    BookText,
    CitationRef,
    HiddenAfter,
    Instruction,
    Message,
    Note,
    Passage,
    Passages,
    Question,
    ResultPart,
    Selection,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    UserPart,
    Withheld,
    citation_from_json,
    part_from_json,
    part_to_json,
    parts_from_json,
    parts_to_json,
)
from core.labels import pages_label

__all__ = [
    "AssistantMessage",
    "AssistantPart",
    "BookText",
    "CitationRef",
    "HiddenAfter",
    "Instruction",
    "Message",
    "Note",
    "Passage",
    "Passages",
    "Question",
    "ResultPart",
    "Selection",
    "StopReason",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "TurnRequest",
    "TurnResult",
    "Usage",
    "UserMessage",
    "UserPart",
    "Withheld",
    "citation_from_json",
    "pages_label",
    "part_from_json",
    "part_to_json",
    "parts_from_json",
    "parts_to_json",
]


class StopReason(StrEnum):
    """Why a model turn ended (the Messages API's values; ``loop.STOP_TABLE`` maps each to
    what happens next)."""

    END_TURN = "end_turn"
    STOP_SEQUENCE = "stop_sequence"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    CONTEXT_WINDOW = "model_context_window_exceeded"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class TurnRequest:
    """One model turn: the system prompt, the conversation so far, the tools offered."""

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 4096
    tool_choice: str = "auto"  # "auto" | "none"


@dataclass(frozen=True)
class TurnResult:
    """The complete assistant turn."""

    message: AssistantMessage
    stop_reason: StopReason
    usage: Usage
