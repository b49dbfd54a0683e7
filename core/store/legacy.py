"""Schema v4 moved stored messages from the Messages API's JSON (how versions before it kept
history) to Margin's own typed parts. This module reads that old form once, during the
migration; nothing else in Margin parses a provider's wire format outside its adapter."""

from __future__ import annotations

import re
from typing import Any

from core.domain.messages import (
    AssistantMessage,
    BookText,
    CitationRef,
    Note,
    Passage,
    Question,
    Selection,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    parts_to_json,
)

_SOURCE = re.compile(r"^margin://book/(\d+)/pages/(\d+)-(\d+)$")
_BOOK_TEXT = re.compile(r'<book_text pages="(\d+)-(\d+)"[^>]*>\n(.*?)\n</book_text>', re.S)
_OTHER_TEXT = re.compile(r'<book_text kind="([^"]*)">\n(.*?)\n</book_text>', re.S)


def _source(value: Any) -> tuple[int, int, int] | None:
    match = _SOURCE.match(str(value or ""))
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _result_parts(content: Any, book_id: int) -> tuple[Any, ...]:
    parts: list[Any] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "search_result":
                src = _source(block.get("source"))
                text = " ".join(str(c.get("text", "")) for c in block.get("content") or [])
                if src:
                    parts.append(Passage(src[0], src[1], src[2], text, str(block.get("title", ""))))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                parts.append(Note(str(block["text"])))
        return tuple(parts)
    text = str(content or "")
    for match in _BOOK_TEXT.finditer(text):
        parts.append(Passage(book_id, int(match[1]), int(match[2]), match[3]))
    for match in _OTHER_TEXT.finditer(text):
        parts.append(BookText(match[1], match[2]))
    rest = _OTHER_TEXT.sub("", _BOOK_TEXT.sub("", text)).strip()
    if rest:
        parts.append(Note(rest))
    return tuple(parts)


def typed_content(
    role: str,
    kind: str,
    content: Any,
    *,
    text: str,
    selection_text: str | None,
    selection_page: int | None,
    book_id: int,
) -> list[dict[str, Any]]:
    """A stored message of schema ≤ 3 as typed parts (JSON)."""
    blocks = content if isinstance(content, list) else []
    if role == "user" and kind == "question":
        selection = (
            Selection(selection_text, int(selection_page))
            if selection_text and selection_page
            else None
        )
        return parts_to_json([Question(text, selection)])
    if role == "user":
        results = [
            ToolResult(
                str(b.get("tool_use_id", "")),
                _result_parts(b.get("content"), book_id),
                bool(b.get("is_error", False)),
            )
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        return parts_to_json(UserMessage(tuple(results)).parts)
    parts: list[Any] = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            cites = []
            for c in b.get("citations") or []:
                src = _source(c.get("source")) if isinstance(c, dict) else None
                if src:
                    cites.append(CitationRef(src[0], src[1], src[2], str(c.get("cited_text", ""))))
            parts.append(TextPart(str(b.get("text", "")), tuple(cites)))
        elif b.get("type") == "tool_use":
            args = b.get("input")
            parts.append(
                ToolCall(
                    str(b.get("id", "")),
                    str(b.get("name", "")),
                    args if isinstance(args, dict) else {},
                )
            )
    return parts_to_json(AssistantMessage(tuple(parts)).parts)
