from __future__ import annotations

from typing import Any

import pytest

from core.agent.context import BookContext, StoredMessage, estimate_tokens
from core.errors import SettingsError
from core.settings import AgentLimits


def q(text: str) -> StoredMessage:
    return StoredMessage("user", "question", [{"type": "text", "text": text}], "complete", 1)


def answer(text: str, status: str = "complete") -> StoredMessage:
    return StoredMessage("assistant", "answer", [{"type": "text", "text": text}], status, 1)


def tool_turn(tool_id: str) -> list[StoredMessage]:
    return [
        StoredMessage(
            "assistant",
            "tool_use",
            [{"type": "tool_use", "id": tool_id, "name": "search_book", "input": {"query": "x"}}],
            "complete",
            1,
        ),
        StoredMessage(
            "user",
            "tool_results",
            [{"type": "tool_result", "tool_use_id": tool_id, "content": "R" * 2000}],
            "complete",
            1,
        ),
    ]


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
    msgs = BookContext().history(stored, AgentLimits())
    assert roles(msgs) == ["user", "assistant", "user", "assistant", "user"]
    assert [b["text"] for b in msgs[0]["content"]] == ["one", "two"], (
        "consecutive user messages merge"
    )
    assert "partial" not in str(msgs)


def test_old_tool_results_are_shortened_recent_kept() -> None:
    stored = [q("one"), *tool_turn("old"), answer("a1"), q("two"), *tool_turn("new")]
    msgs = BookContext().history(stored, AgentLimits())
    old = next(b for m in msgs for b in m["content"] if b.get("tool_use_id") == "old")
    new = next(b for m in msgs for b in m["content"] if b.get("tool_use_id") == "new")
    assert len(old["content"]) < 500 and len(new["content"]) == 2000


def test_message_cap_never_starts_with_orphan_tool_result() -> None:
    stored: list[StoredMessage] = []
    for i in range(30):
        stored += [q(f"question {i}"), *tool_turn(f"t{i}"), answer(f"answer {i}")]
    msgs = BookContext().history(stored, AgentLimits(max_history_messages=7))
    assert msgs[0]["role"] == "user"
    assert not any(b.get("type") == "tool_result" for b in msgs[0]["content"])
    assert msgs[-1]["content"][-1]["text"] == "answer 29" or roles(msgs)[-1] == "assistant"
    assert len(msgs) <= 7


def test_token_budget_drops_oldest() -> None:
    stored = [q("x" * 4000), answer("y" * 4000), q("recent question")]
    msgs = BookContext().history(stored, AgentLimits(history_token_budget=500))
    assert msgs == [{"role": "user", "content": [{"type": "text", "text": "recent question"}]}]
    assert estimate_tokens(msgs) < 500


def test_unanswered_tool_use_is_dropped() -> None:
    stored = [
        q("one"),
        StoredMessage(
            "assistant",
            "tool_use",
            [
                {"type": "text", "text": "looking"},
                {"type": "tool_use", "id": "lost", "name": "x", "input": {}},
            ],
            "complete",
            1,
        ),
        q("two"),
    ]
    msgs = BookContext().history(stored, AgentLimits())
    assert "lost" not in str(msgs)
    assert roles(msgs) == ["user", "assistant", "user"]


def test_missing_prompt_file_is_a_clear_error(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, alice: Any
) -> None:
    monkeypatch.setenv("MARGIN_PROMPTS", str(tmp_path))
    with pytest.raises(SettingsError) as err:
        BookContext().system(alice, bound=10, selection=None, citations=True)
    assert "conversation_system_prompt.md" in err.value.message and "missing" in err.value.message
