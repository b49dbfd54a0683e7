"""Passages mode: no model at all. It runs through the same loop as a model would: first
turn, it calls ``search_book`` with the question (and the selection); second turn, it answers
with the best passages quoted with their pages, labelled clearly as passages and not as an AI
answer. Deterministic, instant, and useful before anyone has an API key."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from core.agent.events import Usage
from core.agent.providers.base import (
    ProviderEvent,
    StreamCitation,
    StreamText,
    TurnRequest,
    TurnResult,
)
from core.agent.tools import pages_label, parse_source

HEADER = "**Passages from the book** — no AI model is connected, so these are the closest matches to your question, not an answer."
QUOTE_CHARS = 450
_SELECTION = re.compile(r'<book_text kind="selection"[^>]*>\n(.*?)\n</book_text>', re.S)


def _question_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", ""))
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text"
    )


def _query(text: str) -> str:
    """The question plus the start of any selection; instructions of quick actions are
    ordinary words here and the search ranks the distinctive ones."""
    selection = _SELECTION.search(text)
    question = _SELECTION.sub(" ", text)
    question = re.sub(r"I selected this passage on page \d+:", " ", question)
    words = question.split()
    if selection:
        words += selection.group(1).split()[:40]
    return " ".join(words)[:500]


def _excerpt(text: str, terms: list[str]) -> str:
    """About QUOTE_CHARS of the passage around the first place a query term appears."""
    text = " ".join(text.split())
    if len(text) <= QUOTE_CHARS:
        return text
    lowered = text.lower()
    hits = [i for i in (lowered.find(t) for t in terms if len(t) > 3) if i >= 0]
    centre = min(hits) if hits else 0
    start = max(0, centre - QUOTE_CHARS // 3)
    if start:
        sentence = text.rfind(". ", 0, start + 1)
        start = (
            sentence + 2
            if sentence >= 0 and start - sentence < QUOTE_CHARS // 3
            else text.find(" ", start) + 1
        )
    end = min(len(text), start + QUOTE_CHARS)
    if end < len(text):
        stop = text.rfind(". ", start, end)
        end = stop + 1 if stop > start + QUOTE_CHARS // 2 else text.rfind(" ", start, end)
    return ("… " if start else "") + text[start:end].strip() + (" …" if end < len(text) else "")


class PassagesProvider:
    name = "passages"
    model = "passages"
    supports_citations = True
    bills_tokens = False

    def __init__(self, top_k: int = 3) -> None:
        self.top_k = top_k
        self._counter = 0

    async def aclose(self) -> None:
        return None

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        last = request.messages[-1] if request.messages else {"content": []}
        raw = last.get("content")
        blocks: list[Any] = raw if isinstance(raw, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        has_search_tool = any(t.get("name") == "search_book" for t in request.tools)
        if not results and has_search_tool:
            self._counter += 1
            call = {
                "type": "tool_use",
                "id": f"passages_{self._counter}",
                "name": "search_book",
                "input": {"query": _query(_question_text(last)), "top_k": self.top_k},
            }
            yield TurnResult([call], "tool_use", Usage())
            return
        passages: list[dict[str, Any]] = []
        notes: list[str] = []
        for result in results:
            content = result.get("content")
            if isinstance(content, list):
                passages.extend(b for b in content if b.get("type") == "search_result")
                notes.extend(str(b.get("text", "")) for b in content if b.get("type") == "text")
            elif isinstance(content, str):
                notes.append(content)
        if not passages:
            # the always-retrieve strategy puts search results straight into the question
            passages = [
                b for b in blocks if isinstance(b, dict) and b.get("type") == "search_result"
            ]
        question: dict[str, Any] = next(
            (
                m
                for m in reversed(request.messages)
                if m.get("role") == "user"
                and not any(
                    isinstance(b, dict) and b.get("type") == "tool_result"
                    for b in (m.get("content") or [])
                )
            ),
            {},
        )
        terms = [w.lower().strip(".,;:!?\"'“”’") for w in _query(_question_text(question)).split()]
        notes = [n.replace(" Do not guess what they say.", "") for n in notes]
        parts: list[str] = []
        if passages:
            yield StreamText(HEADER + "\n\n")
            parts.append(HEADER + "\n\n")
            for block in passages:
                source = str(block.get("source", ""))
                parsed = parse_source(source)
                text = " ".join(str(c.get("text", "")) for c in block.get("content", []))
                quote = _excerpt(text, terms)
                label = pages_label(parsed[1], parsed[2]) if parsed else ""
                piece = f"> {quote}\n\n— {label}\n\n"
                parts.append(piece)
                yield StreamText(piece)
                yield StreamCitation(source, str(block.get("title", "")), quote)
            for note in notes:
                if note.strip():
                    piece = f"*{note.strip()}*\n\n"
                    parts.append(piece)
                    yield StreamText(piece)
            tail = "Connect Claude or a local model in Settings to get real answers."
            parts.append(tail)
            yield StreamText(tail)
        else:
            message = (
                " ".join(n.strip() for n in notes if n.strip())
                or "No passage matches your question."
            )
            text = f"{message}\n\nTry other words, or connect Claude or a local model in Settings to get real answers."
            parts.append(text)
            yield StreamText(text)
        yield TurnResult([{"type": "text", "text": "".join(parts)}], "end_turn", Usage())
