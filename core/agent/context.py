"""The prompt for one turn: system prompt from ``prompts/`` and the conversation history.

History is the whole conversation within a message cap and a token budget; the oldest turns
go first, the history never starts with an orphan tool result, every ``tool_use`` keeps its
result, old tool results are shortened, and the system prompt and tools stay byte-stable so
prompt caching works.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from core.agent.tools import defuse
from core.prompts import load_prompt
from core.settings import AgentLimits
from core.store.library import BookInfo

OLD_RESULT_CHARS = 400


@dataclass(frozen=True)
class Selection:
    """A passage the reader selected, handed to the question."""

    text: str
    page: int


@dataclass(frozen=True)
class StoredMessage:
    role: str
    kind: str
    content: list[dict[str, Any]]
    status: str
    run_id: int | None


def estimate_tokens(value: Any) -> int:
    """A cheap, conservative token estimate (about 3.5 characters a token)."""
    return int(len(json.dumps(value, ensure_ascii=False)) / 3.5) + 4


def question_content(text: str, selection: Selection | None) -> list[dict[str, Any]]:
    """The user message for a question; a selection goes in as delimited book text."""
    if selection is None or not selection.text.strip():
        return [{"type": "text", "text": text}]
    quoted = f'<book_text kind="selection" pages="{selection.page}-{selection.page}">\n{defuse(selection.text.strip())}\n</book_text>'
    return [
        {
            "type": "text",
            "text": f"I selected this passage on page {selection.page}:\n{quoted}\n\n{text}",
        }
    ]


class ContextStrategy(Protocol):
    def system(
        self, book: BookInfo, *, bound: int | None, selection: Selection | None, citations: bool
    ) -> list[dict[str, Any]]: ...

    def history(
        self, stored: list[StoredMessage], limits: AgentLimits, *, shrink: bool = False
    ) -> list[dict[str, Any]]: ...


class BookContext:
    """The default context strategy."""

    def system(
        self, book: BookInfo, *, bound: int | None, selection: Selection | None, citations: bool
    ) -> list[dict[str, Any]]:
        if bound is None:
            position = (
                "The reader has finished the book or lifted the spoiler limit: you may read and discuss all of it."
                if book.finished
                else f"The reader has read up to page {book.read_to}, but allowed you to read the whole book."
            )
        else:
            position = (
                f"The reader has read up to page {bound} (read_to). Spoiler-safe mode is on: the tools only show pages 1 to {bound}. "
                "Never reveal or hint at what happens later in the book, even if you think you know it; "
                "if the reader asks about later events, say that you will not spoil them."
            )
        citation_rule = (
            "Your answers carry citations automatically when you use text from the search results and pages."
            if citations
            else "After each claim from the book, add its page label exactly as given, for example [p. 12] or [pp. 12–13]."
        )
        selection_block = (
            f"The reader selected a passage on page {selection.page}; it is in their message inside "
            '<book_text kind="selection">. Their question is about it.'
            if selection is not None
            else ""
        )
        text = load_prompt(
            "conversation_system_prompt",
            book_title=book.title,
            book_author=f" by {book.author}" if book.author else "",
            page_count=str(book.page_count),
            position_rule=position,
            citation_rule=citation_rule,
            selection_block=selection_block,
        )
        return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]

    def history(
        self, stored: list[StoredMessage], limits: AgentLimits, *, shrink: bool = False
    ) -> list[dict[str, Any]]:
        usable = [
            m
            for m in stored
            if not (m.role == "assistant" and m.status in ("failed", "interrupted", "running"))
        ]
        last_question = max(
            (i for i, m in enumerate(usable) if m.kind == "question"), default=len(usable)
        )
        messages: list[dict[str, Any]] = []
        for i, m in enumerate(usable):
            content = _replayable(m.content, old=i < last_question)
            if not content:
                continue
            if messages and messages[-1]["role"] == m.role:
                messages[-1] = {"role": m.role, "content": messages[-1]["content"] + content}
            else:
                messages.append({"role": m.role, "content": content})
        messages = _pair_tools(messages)
        cap = limits.max_history_messages // (2 if shrink else 1)
        budget = limits.history_token_budget // (2 if shrink else 1)
        if len(messages) > cap:
            messages = messages[-cap:]
        while len(messages) > 1 and estimate_tokens(messages) > budget:
            messages = messages[1:]
            messages = _clean_start(messages)
        return _clean_start(messages)


def _replayable(content: list[dict[str, Any]], *, old: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            if block.get("text", "").strip():
                out.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            out.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("input") or {},
                }
            )
        elif kind == "tool_result":
            result = dict(block)
            if old:
                result["content"] = _shorten(block.get("content"))
            out.append(result)
        else:
            out.append(block)
    return out


def _shorten(content: Any) -> str:
    if isinstance(content, str):
        return (
            content
            if len(content) <= OLD_RESULT_CHARS
            else content[:OLD_RESULT_CHARS] + " […shortened]"
        )
    if isinstance(content, list):
        titles = [
            str(b.get("title", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "search_result"
        ]
        texts = [
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        summary = ("Earlier results: " + "; ".join(titles)) if titles else " ".join(texts)
        return summary[:OLD_RESULT_CHARS] or "(earlier result)"
    return "(earlier result)"


def _pair_tools(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep only tool_use blocks answered in the next message, and tool_result blocks that
    answer the previous message's tool_use; drop messages left empty."""
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        content = msg["content"]
        if msg["role"] == "assistant":
            nxt = (
                messages[i + 1]["content"]
                if i + 1 < len(messages) and messages[i + 1]["role"] == "user"
                else []
            )
            answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
            content = [b for b in content if b.get("type") != "tool_use" or b.get("id") in answered]
        else:
            prev = out[-1]["content"] if out and out[-1]["role"] == "assistant" else []
            asked = {b.get("id") for b in prev if b.get("type") == "tool_use"}
            results = [
                b
                for b in content
                if b.get("type") == "tool_result" and b.get("tool_use_id") in asked
            ]
            others = [b for b in content if b.get("type") != "tool_result"]
            content = results + others
        if content:
            if out and out[-1]["role"] == msg["role"]:
                out[-1] = {"role": msg["role"], "content": out[-1]["content"] + content}
            else:
                out.append({"role": msg["role"], "content": content})
    return out


def _clean_start(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    while messages and (
        messages[0]["role"] != "user"
        or any(b.get("type") == "tool_result" for b in messages[0]["content"])
    ):
        messages = messages[1:]
    return messages
