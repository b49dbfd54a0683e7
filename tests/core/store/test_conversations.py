"""Conversations in the store (core/store/conversations.py) and the v4 migration of history."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from core.agent.types import (
    AssistantMessage,
    CitationRef,
    Note,
    Passage,
    Question,
    Selection,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    parts_from_json,
    parts_to_json,
)
from core.paths import resolve_paths
from core.store.conversations import Conversations
from core.store.frozen.messages_v4 import typed_content
from core.store.library import Library


def _book(lib: Library) -> int:
    from core.store import models as m

    book = m.Book.create(title="T", format="txt", sha256="c" * 64, page_count=10)
    return int(book.id)


def test_listing_conversations_is_one_query(margin_home: Path) -> None:
    lib = Library.open(resolve_paths())
    conversations = Conversations(lib.db)
    book_id = _book(lib)
    for i in range(12):
        conv = conversations.create(book_id, f"c{i}")
        ids = conversations.start_run(
            conv.id, provider="passages", model="p", strategy="tool-use", question=Question("q")
        )
        conversations.finish(
            conversation_id=conv.id,
            ids=ids,
            status="complete",
            message=AssistantMessage((TextPart("a"),)),
            text="a",
            citations=(),
            steps=1,
            usage=Usage(),
            stop_reason="end_turn",
        )
    statements: list[str] = []
    connection: sqlite3.Connection = lib.db.connection()
    connection.set_trace_callback(statements.append)
    listed = conversations.list_for_book(book_id)
    connection.set_trace_callback(None)
    assert len(listed) == 12 and all(c.message_count == 2 for c in listed)
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1
    lib.close()


def test_typed_parts_round_trip() -> None:
    parts: list[Any] = [
        Question("why?", Selection("the grin", 40), prompt="Explain…"),
        ToolResult("t1", (Passage(1, 3, 4, "text", "Book, pp. 3–4", "text"), Note("n")), True),
        TextPart("answer", (CitationRef(1, 3, 3, "quoted"),)),
        ToolCall("t2", "read_pages", {"start": 2}),
    ]
    assert list(parts_from_json(json.loads(json.dumps(parts_to_json(parts))))) == parts


def test_old_wire_history_becomes_typed_parts() -> None:
    question = typed_content(
        "user",
        "question",
        [{"type": "text", "text": "I selected…<book_text>x</book_text>\n\nWhy?"}],
        text="Why?",
        selection_text="x",
        selection_page=3,
        book_id=1,
    )
    assert parts_from_json(question) == (Question("Why?", Selection("x", 3)),)
    results = typed_content(
        "user",
        "tool_results",
        [
            {
                "type": "tool_result",
                "tool_use_id": "a",
                "content": [
                    {
                        "type": "search_result",
                        "source": "margin://book/1/pages/5-6",
                        "title": "B, pp. 5–6",
                        "content": [{"type": "text", "text": "found"}],
                    },
                    {"type": "text", "text": "More later."},
                ],
            },
            {
                "type": "tool_result",
                "tool_use_id": "b",
                "content": '<book_text pages="7-7" label="[p. 7]">\nlocal text\n</book_text>\n\nCite it.',
            },
        ],
        text="",
        selection_text=None,
        selection_page=None,
        book_id=1,
    )
    (message,) = [UserMessage(parts_from_json(results))]
    a, b = message.results
    assert a.passages == (Passage(1, 5, 6, "found", "B, pp. 5–6"),) and a.notes == ("More later.",)
    assert b.passages == (Passage(1, 7, 7, "local text"),) and b.notes == ("Cite it.",)
    answer = typed_content(
        "assistant",
        "answer",
        [
            {
                "type": "text",
                "text": "It grins.",
                "citations": [{"source": "margin://book/1/pages/9-9", "cited_text": "grin"}],
            },
            {"type": "tool_use", "id": "c", "name": "x", "input": "not an object"},
        ],
        text="It grins.",
        selection_text=None,
        selection_page=None,
        book_id=1,
    )
    assert parts_from_json(answer) == (
        TextPart("It grins.", (CitationRef(1, 9, 9, "grin"),)),
        ToolCall("c", "x", {}),
    )


def test_history_reads_answers_and_failed_runs(margin_home: Path) -> None:
    """An answer carries its run's usage, tool calls and error; a run that failed before any
    text keeps no answer and shows its error under its question instead."""
    from core.domain.messages import ErrorInfo, ToolCallRecord

    lib = Library.open(resolve_paths())
    conversations = Conversations(lib.db)
    conv = conversations.create(_book(lib))
    call = ToolCallRecord("t1", "search_book", {"query": "cat"}, "2 passages", False, 3.5, 1)

    def run(text: str, status: str, error: ErrorInfo | None) -> int:
        ids = conversations.start_run(
            conv.id, provider="anthropic", model="m", strategy="tool-use", question=Question(text)
        )
        conversations.add_tool_call(ids.run_id, call, {}, [])
        conversations.finish(
            conversation_id=conv.id,
            ids=ids,
            status=status,
            message=AssistantMessage((TextPart(text.upper()),) if status != "failed" else ()),
            text=text.upper() if status != "failed" else "",
            citations=(),
            steps=1,
            usage=Usage(10, 5),
            stop_reason="end_turn",
            error=error,
        )
        return ids.run_id

    first = run("answered", "complete", None)
    second = run("failed", "failed", ErrorInfo("overloaded", "Claude is overloaded.", "Wait."))
    history = conversations.history(conv.id)
    assert [(h.role, h.text, h.status) for h in history] == [
        ("user", "answered", "complete"),
        ("assistant", "ANSWERED", "complete"),
        ("user", "failed", "complete"),
        ("assistant", "", "failed"),
    ]
    question, answer, failed_question, failed = history
    assert question.usage is None and question.tool_calls == () and question.error is None
    assert answer.run_id == first and answer.usage == Usage(10, 5) and answer.error is None
    assert answer.tool_calls == (call,)
    assert failed.id == -failed_question.id and failed.run_id == second
    assert failed.error == ErrorInfo("overloaded", "Claude is overloaded.", "Wait.")
    assert failed.tool_calls == (call,) and failed.usage is None
    lib.close()
