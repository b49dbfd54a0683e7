"""A conversation as it is read back: the questions and answers the reader sees (with what
each run did), the history the model saw, and what the runs cost."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.domain.messages import (
    AssistantMessage,
    CitationRef,
    ErrorInfo,
    Message,
    Passage,
    Question,
    ToolCallRecord,
    Usage,
    UserMessage,
    Withheld,
    citation_from_json,
    parts_from_json,
)
from core.domain.pricing import estimate_cost
from core.store import models as m

SHOWN_KINDS = ("question", "answer")


@dataclass(frozen=True)
class MessageRecord:
    """One message as the reader sees it (a question or an answer)."""

    id: int
    role: str
    text: str
    status: str
    created_at: dt.datetime
    selection_text: str | None = None
    selection_page: int | None = None
    citations: tuple[CitationRef, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    run_id: int | None = None
    error: ErrorInfo | None = None
    usage: Usage | None = None
    passages: tuple[Passage, ...] = ()  # what the tools returned for this answer
    withheld: tuple[Withheld, ...] = ()  # sentences the spoiler check held back
    stop_reason: str = ""  # why the answer's run ended ("repetition": it looped and was cut)


@dataclass(frozen=True)
class StoredMessage:
    """One message of the history as the model saw it."""

    kind: str  # question | tool_use | tool_results | answer
    message: Message
    status: str
    run_id: int | None


def _citations(raw: Any) -> tuple[CitationRef, ...]:
    out = []
    for c in raw or []:
        try:
            out.append(citation_from_json(c))
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(out)


def _passages(raw: Any) -> tuple[Passage, ...]:
    try:
        return tuple(p for p in parts_from_json(raw) if isinstance(p, Passage))
    except (KeyError, TypeError, ValueError):
        return ()


def _withheld(raw: Any) -> tuple[Withheld, ...]:
    try:
        return tuple(p for p in parts_from_json(raw) if isinstance(p, Withheld))
    except (KeyError, TypeError, ValueError):
        return ()


class ConversationHistory:
    """The reading side of ``Conversations``."""

    db: pw.SqliteDatabase

    def get(self, conversation_id: int) -> Any:  # the conversation, or BookError
        raise NotImplementedError

    def stored_messages(self, conversation_id: int) -> list[StoredMessage]:
        rows = (
            m.Message.select(m.Message.role, m.Message.kind, m.Message.content, m.Message.status)
            .select_extend(m.Message.run)
            .where(m.Message.conversation == conversation_id)
            .order_by(m.Message.id)
        )
        out = []
        for r in rows:
            parts = parts_from_json(r.content)
            message: Message = (
                AssistantMessage(parts) if r.role == "assistant" else UserMessage(parts)
            )
            out.append(StoredMessage(r.kind, message, r.status, r.run_id))
        return out

    def history(self, conversation_id: int) -> list[MessageRecord]:
        """The questions and answers as the reader sees them; a failed run that kept no
        answer shows its error under its question."""
        self.get(conversation_id)
        rows = list(
            m.Message.select()
            .where((m.Message.conversation == conversation_id) & (m.Message.kind.in_(SHOWN_KINDS)))
            .order_by(m.Message.id)
        )
        runs = {r.id: r for r in m.Run.select().where(m.Run.conversation == conversation_id)}
        calls: dict[int, list[ToolCallRecord]] = {}
        passages: dict[int, list[Passage]] = {}
        for c in (
            m.ToolCall.select()
            .join(m.Run)
            .where(m.Run.conversation == conversation_id)
            .order_by(m.ToolCall.id)
        ):
            calls.setdefault(c.run_id, []).append(_tool_call_record(c))
            passages.setdefault(c.run_id, []).extend(
                _passages((c.detail or {}).get("passages_typed"))
            )
        answered = {r.run_id for r in rows if r.role == "assistant"}
        out: list[MessageRecord] = []
        for r in rows:
            run = runs.get(r.run_id) if r.run_id else None
            if r.role == "assistant":
                out.append(
                    _message_record(
                        r,
                        run,
                        tool_calls=tuple(calls.get(r.run_id, [])) if r.run_id else (),
                        passages=tuple(passages.get(r.run_id, [])) if r.run_id else (),
                    )
                )
                continue
            out.append(_message_record(r, None))
            if run is not None and run.id not in answered and run.status in FAILED:
                out.append(_failed_run_record(r, run, tuple(calls.get(run.id, []))))
        return out

    def usage(self, conversation_id: int) -> tuple[Usage, float | None]:
        total, cost, _runs = _runs_usage(
            m.Run.select().where(m.Run.conversation == conversation_id)
        )
        return total, cost

    def book_usage(self, book_id: int) -> tuple[Usage, float | None, int]:
        """Tokens and estimated cost of every conversation about the book, and how many runs."""
        return _runs_usage(
            m.Run.select().join(m.Conversation).where(m.Conversation.book == book_id)
        )

    def run_facts(self, conversation_id: int) -> dict[int, tuple[str, str, str]]:
        """Each run of the conversation: (provider, model, strategy)."""
        rows = m.Run.select(m.Run.id, m.Run.provider, m.Run.model, m.Run.strategy).where(
            m.Run.conversation == conversation_id
        )
        return {r.id: (r.provider, r.model, r.strategy) for r in rows}

    def last_question(self, conversation_id: int) -> Question | None:
        row = (
            m.Message.select()
            .where((m.Message.conversation == conversation_id) & (m.Message.kind == "question"))
            .order_by(m.Message.id.desc())
            .first()
        )
        if row is None:
            return None
        question = next((p for p in parts_from_json(row.content) if isinstance(p, Question)), None)
        return question or Question(row.text)


def _runs_usage(runs: Any) -> tuple[Usage, float | None, int]:
    """Summed tokens, estimated cost (Anthropic runs with a known price) and count of ``runs``."""
    total = Usage()
    cost: float | None = None
    count = 0
    for run in runs:
        u = _run_usage(run)
        total = total + u
        count += 1
        if run.provider == "anthropic":
            c = estimate_cost(run.model, u)
            if c is not None:
                cost = (cost or 0.0) + c
    return total, cost, count


FAILED = ("failed", "interrupted")


def _run_usage(run: m.Run) -> Usage:
    return Usage(run.input_tokens, run.output_tokens, run.cache_read_tokens, run.cache_write_tokens)


def _run_error(run: m.Run) -> ErrorInfo:
    return ErrorInfo(run.error_code or run.status, run.error_message, run.error_hint)


# a ToolCallRecord's fields and the tool_call columns that keep them
TOOL_CALL_COLUMNS = {
    "tool_use_id": "tool_use_id",
    "name": "name",
    "arguments": "input",
    "summary": "result_summary",
    "is_error": "is_error",
    "duration_ms": "duration_ms",
    "step": "step",
}


def _tool_call_record(row: m.ToolCall) -> ToolCallRecord:
    fields = {name: getattr(row, column) for name, column in TOOL_CALL_COLUMNS.items()}
    return ToolCallRecord(**{**fields, "arguments": row.input or {}})


# the message row's columns a MessageRecord takes as they are
MESSAGE_COLUMNS = (
    "id",
    "role",
    "text",
    "status",
    "created_at",
    "selection_text",
    "selection_page",
    "run_id",
)


def _message_record(
    row: m.Message,
    run: m.Run | None,
    *,
    tool_calls: tuple[ToolCallRecord, ...] = (),
    passages: tuple[Passage, ...] = (),
) -> MessageRecord:
    """A question, or an answer with what its run did (``run``: the answer's run)."""
    return MessageRecord(
        **{name: getattr(row, name) for name in MESSAGE_COLUMNS},
        citations=_citations(row.citations),
        tool_calls=tool_calls,
        error=_run_error(run) if run is not None and run.error_code else None,
        usage=_run_usage(run) if run is not None else None,
        passages=passages,
        withheld=_withheld(row.content) if row.role == "assistant" else (),
        stop_reason=run.stop_reason if run is not None and row.role == "assistant" else "",
    )


def _failed_run_record(
    question: m.Message, run: m.Run, tool_calls: tuple[ToolCallRecord, ...]
) -> MessageRecord:
    """Where a failed or interrupted run that kept no answer shows its error."""
    return MessageRecord(
        id=-question.id,
        role="assistant",
        text="",
        status=run.status,
        created_at=run.finished_at or question.created_at,
        tool_calls=tool_calls,
        run_id=run.id,
        error=_run_error(run),
    )
