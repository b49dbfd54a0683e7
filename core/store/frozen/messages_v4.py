"""Migration v4: stored messages from the Messages API's JSON (how versions before it kept
history) to Margin's own typed parts, as JSON.

Frozen: it writes the parts' JSON itself, as ``core.domain.messages`` wrote it when this
step was last changed, so a later change to the message classes never changes what v4
does. Nothing else in Margin parses a provider's wire format outside its adapter.
"""

from __future__ import annotations

import re
from typing import Any

_SOURCE = re.compile(r"^margin://book/(\d+)/pages/(\d+)-(\d+)$")
_BOOK_TEXT = re.compile(r'<book_text pages="(\d+)-(\d+)"[^>]*>\n(.*?)\n</book_text>', re.S)
_OTHER_TEXT = re.compile(r'<book_text kind="([^"]*)">\n(.*?)\n</book_text>', re.S)


def _source(value: Any) -> tuple[int, int, int] | None:
    match = _SOURCE.match(str(value or ""))
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _passage(book_id: int, first: int, last: int, text: str, title: str = "") -> dict[str, Any]:
    return {
        "kind": "passage",
        "book_id": book_id,
        "first_page": first,
        "last_page": last,
        "text": text,
        "title": title,
        "quote": "",
    }


def _note(text: str) -> dict[str, Any]:
    return {"kind": "note", "text": text}


def _result_parts(content: Any, book_id: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "search_result":
                src = _source(block.get("source"))
                text = " ".join(str(c.get("text", "")) for c in block.get("content") or [])
                if src:
                    parts.append(_passage(*src, text, str(block.get("title", ""))))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                parts.append(_note(str(block["text"])))
        return parts
    text = str(content or "")
    for match in _BOOK_TEXT.finditer(text):
        parts.append(_passage(book_id, int(match[1]), int(match[2]), match[3]))
    for match in _OTHER_TEXT.finditer(text):
        parts.append({"kind": "book_text", "book_kind": match[1], "text": match[2]})
    rest = _OTHER_TEXT.sub("", _BOOK_TEXT.sub("", text)).strip()
    if rest:
        parts.append(_note(rest))
    return parts


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
        question: dict[str, Any] = {"kind": "question", "text": text}
        if selection_text and selection_page:
            question["selection"] = {"text": selection_text, "page": int(selection_page)}
        return [question]
    if role == "user":
        return [
            {
                "kind": "tool_result",
                "call_id": str(b.get("tool_use_id", "")),
                "is_error": bool(b.get("is_error", False)),
                "parts": _result_parts(b.get("content"), book_id),
            }
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            part: dict[str, Any] = {"kind": "text", "text": str(b.get("text", ""))}
            cites = []
            for c in b.get("citations") or []:
                src = _source(c.get("source")) if isinstance(c, dict) else None
                if src:
                    cites.append(
                        {
                            "book_id": src[0],
                            "first_page": src[1],
                            "last_page": src[2],
                            "quoted_text": str(c.get("cited_text", "")),
                        }
                    )
            if cites:
                part["citations"] = cites
            parts.append(part)
        elif b.get("type") == "tool_use":
            args = b.get("input")
            parts.append(
                {
                    "kind": "tool_call",
                    "id": str(b.get("id", "")),
                    "name": str(b.get("name", "")),
                    "arguments": dict(args) if isinstance(args, dict) else {},
                }
            )
    return parts
