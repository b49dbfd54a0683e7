from __future__ import annotations

from typing import Any

import pytest

from core.agent.context import BookContext
from core.agent.context import estimate_tokens as typed_estimate
from core.agent.providers.anthropic.wire import render_messages
from core.agent.types import (
    AssistantMessage,
    Message,
    Note,
    Passage,
    Question,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from core.errors import SettingsError
from core.settings import AgentLimits
from core.store.conversations import StoredMessage


def q(text: str, run: int = 1) -> StoredMessage:
    return StoredMessage("question", UserMessage((Question(text),)), "complete", run)


def answer(text: str, status: str = "complete", run: int = 1) -> StoredMessage:
    return StoredMessage("answer", AssistantMessage((TextPart(text),)), status, run)


def tool_turn(tool_id: str) -> list[StoredMessage]:
    return [
        StoredMessage(
            "tool_use",
            AssistantMessage((ToolCall(tool_id, "search_book", {"query": "x"}),)),
            "complete",
            1,
        ),
        StoredMessage(
            "tool_results",
            UserMessage((ToolResult(tool_id, (Note("R" * 2000),)),)),
            "complete",
            1,
        ),
    ]


def history(stored: list[StoredMessage], limits: AgentLimits, **kw: Any) -> list[dict[str, Any]]:
    """The history as the Messages API would receive it."""
    return render_messages(BookContext().history(stored, limits, **kw), citations=True)


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    return int(len(str(messages)) / 3.5) + 4


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_history_alternates_and_drops_failed_answers() -> None:
    stored = [
        q("one"),
        answer("partial", "failed"),
        q("two"),
        *tool_turn("t1"),
        answer("final"),
        q("three"),
    ]
    msgs = history(stored, AgentLimits())
    assert roles(msgs) == ["user", "assistant", "user", "assistant", "user"]
    assert [b["text"] for b in msgs[0]["content"]] == ["one", "two"], (
        "consecutive user messages merge"
    )
    assert "partial" not in str(msgs)


def test_old_tool_results_are_shortened_recent_kept() -> None:
    stored = [q("one"), *tool_turn("old"), answer("a1"), q("two"), *tool_turn("new")]
    msgs = history(stored, AgentLimits())
    old = next(b for m in msgs for b in m["content"] if b.get("tool_use_id") == "old")
    new = next(b for m in msgs for b in m["content"] if b.get("tool_use_id") == "new")
    assert len(old["content"]) < 500 and len(new["content"]) == 2000


def test_message_cap_never_starts_with_orphan_tool_result() -> None:
    stored: list[StoredMessage] = []
    for i in range(30):
        stored += [q(f"question {i}"), *tool_turn(f"t{i}"), answer(f"answer {i}")]
    msgs = history(stored, AgentLimits(max_history_messages=7))
    assert msgs[0]["role"] == "user"
    assert not any(b.get("type") == "tool_result" for b in msgs[0]["content"])
    assert msgs[-1]["content"][-1]["text"] == "answer 29" or roles(msgs)[-1] == "assistant"
    assert len(msgs) <= 7


def test_token_budget_drops_oldest() -> None:
    stored = [q("x" * 4000), answer("y" * 4000), q("recent question")]
    msgs = history(stored, AgentLimits(history_token_budget=500))
    assert msgs == [{"role": "user", "content": [{"type": "text", "text": "recent question"}]}]
    assert estimate_tokens(msgs) < 500


def test_unanswered_tool_use_is_dropped() -> None:
    stored = [
        q("one"),
        StoredMessage(
            "tool_use",
            AssistantMessage((TextPart("looking"), ToolCall("lost", "x", {}))),
            "complete",
            1,
        ),
        q("two"),
    ]
    msgs = history(stored, AgentLimits())
    assert "lost" not in str(msgs)
    assert roles(msgs) == ["user", "assistant", "user"]


def test_missing_prompt_file_is_a_clear_error(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, alice: Any
) -> None:
    monkeypatch.setenv("MARGIN_PROMPTS", str(tmp_path))
    with pytest.raises(SettingsError) as err:
        BookContext().system(alice, bound=10, selection=None, citations=True)
    assert "conversation_system_prompt.md" in err.value.message and "missing" in err.value.message


def test_lowered_bound_withholds_earlier_passages_and_answers() -> None:
    """After the reader lowers read_to, nothing from beyond it is replayed to the model."""
    late = Passage(1, 90, 90, "Scrooge was better than his word. " * 12, "Carol, p. 90")
    early = Passage(1, 5, 5, "Marley was dead: to begin with.", "Carol, p. 5")
    stored = [
        q("what happens at the end?", run=1),
        StoredMessage(
            "tool_use", AssistantMessage((ToolCall("s1", "search_book", {}),)), "complete", 1
        ),
        StoredMessage(
            "tool_results", UserMessage((ToolResult("s1", (late, early)),)), "complete", 1
        ),
        answer("He becomes generous [p. 90].", run=1),
        q("who is Marley?", run=2),
        answer("Scrooge's dead partner [p. 5].", run=2),
        q("and now?", run=3),
    ]
    sent = str(history(stored, AgentLimits(), bound=9))
    assert "better than his word" not in sent and "becomes generous" not in sent
    assert "withheld" in sent and "dead partner" in sent
    unbounded = str(history(stored, AgentLimits(), bound=None))
    assert "becomes generous" in unbounded


def test_typed_token_estimate_grows_with_text() -> None:
    short: list[Message] = [UserMessage((Question("hi"),))]
    long: list[Message] = [UserMessage((Question("hi " * 1000),))]
    assert typed_estimate(long) > typed_estimate(short) * 50
