"""The Messages API wire format, both ways — the only place in Margin that knows it.

Rendering: typed messages become content blocks. Book text is untrusted: for a server with
citations (Claude) passages go out as ``search_result`` blocks the model can cite; for a
local server they go out as ``<book_text pages="…" label="[p. N]">`` delimited text, and
anything in book text that looks like those delimiters is defused. Prompt caching marks the
system prompt and the last tool.

Parsing: a finished message becomes an ``AssistantMessage``; tool calls are normalised
(an input that is not an object becomes ``{}``, a repeated id gets a new one) so a
misbehaving server cannot poison the stored history that every later request replays.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterable
from typing import Any

from core.agent.types import (
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
    StopReason,
    TextPart,
    ToolCall,
    ToolResult,
    TurnRequest,
    Usage,
    UserMessage,
)
from core.prompts import load_prompt

log = logging.getLogger("margin.provider")

SOURCE_PREFIX = "margin://book/"
_SOURCE = re.compile(r"^margin://book/(\d+)/pages/(\d+)-(\d+)$")
_DELIMITER = re.compile(r"<(/?)(book_text|book_passage|search_result)", re.I)
CACHE = {"type": "ephemeral"}


def defuse(text: str) -> str:
    """Book text cannot close or open the delimiters that mark it as book text."""
    return _DELIMITER.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def source_for(book_id: int, first: int, last: int) -> str:
    return f"{SOURCE_PREFIX}{book_id}/pages/{first}-{last}"


def parse_source(source: str) -> tuple[int, int, int] | None:
    match = _SOURCE.match(source)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def citation(source: Any, cited_text: Any) -> CitationRef | None:
    """A citation the server reported, if it points at a passage Margin sent."""
    parsed = parse_source(str(source or ""))
    if parsed is None:
        return None
    return CitationRef(parsed[0], parsed[1], parsed[2], str(cited_text or ""))


# -- rendering ----------------------------------------------------------------------------


def _book_text(kind: str, text: str) -> str:
    return f'<book_text kind="{kind}">\n{defuse(text)}\n</book_text>'


def _hidden(part: HiddenAfter) -> str:
    return load_prompt("hidden_after", page=str(part.page)).strip()


def _labelled(p: Passage) -> str:
    # the paper book's page, from the book's page-list (its words: escaped)
    printed = f' printed="{html.escape(p.printed)}"' if p.printed else ""
    return (
        f'<book_text pages="{p.first_page}-{p.last_page}" label="[{p.label}]"{printed}>\n'
        f"{defuse(p.text)}\n</book_text>"
    )


def _search_result(p: Passage) -> dict[str, Any]:
    return {
        "type": "search_result",
        "source": source_for(p.book_id, p.first_page, p.last_page),
        "title": p.title or p.label,
        "content": [{"type": "text", "text": p.text or "(no text)"}],
        "citations": {"enabled": True},
    }


def _parts_blocks(parts: Iterable[ResultPart]) -> list[dict[str, Any]]:
    """Tool-result parts for a server with citations."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Passage):
            blocks.append(_search_result(part))
        elif isinstance(part, HiddenAfter):
            blocks.append({"type": "text", "text": _hidden(part)})
        elif isinstance(part, BookText):
            blocks.append({"type": "text", "text": _book_text(part.kind, part.text)})
        elif part.text.strip():
            blocks.append({"type": "text", "text": part.text})
    return blocks


def _parts_text(parts: Iterable[ResultPart]) -> str:
    """Tool-result parts for a server without citations: delimited text with labels."""
    parts = list(parts)
    pieces: list[str] = []
    passages = [p for p in parts if isinstance(p, Passage)]
    if passages:
        pieces.append("\n\n".join(_labelled(p) for p in passages))
        pieces.append(load_prompt("label_hint").strip())
    for part in parts:
        if isinstance(part, HiddenAfter):
            pieces.append(_hidden(part))
        elif isinstance(part, BookText):
            pieces.append(_book_text(part.kind, part.text))
        elif isinstance(part, Note) and part.text.strip():
            pieces.append(part.text)
    return "\n\n".join(pieces)


def question_text(question: Question) -> str:
    if question.selection is None or not question.selection.text.strip():
        return question.for_model
    sel = question.selection
    quoted = (
        f'<book_text kind="selection" pages="{sel.page}-{sel.page}">\n'
        f"{defuse(sel.text.strip())}\n</book_text>"
    )
    return load_prompt(
        "question_with_selection", page=str(sel.page), passage=quoted, question=question.for_model
    ).strip()


def _user_blocks(message: UserMessage, citations: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, Question):
            blocks.append({"type": "text", "text": question_text(part)})
        elif isinstance(part, ToolResult):
            # passages become citable blocks for a server with citations; anything else is text
            content: str | list[dict[str, Any]] = (
                _parts_blocks(part.parts)
                if citations and part.passages
                else _parts_text(part.parts)
            )
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.call_id,
                "content": content or "(no output)",
            }
            if part.is_error:
                block["is_error"] = True
            blocks.append(block)
        elif isinstance(part, Passages):
            if citations:
                blocks.extend(_search_result(p) for p in part.passages)
            elif part.passages:
                blocks.append({"type": "text", "text": _parts_text(part.passages)})
        elif isinstance(part, Instruction):
            blocks.append({"type": "text", "text": part.text})
    # the API wants tool results first in a user turn
    blocks.sort(key=lambda b: b["type"] != "tool_result")
    return blocks


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part.id,
                    "name": part.name,
                    "input": dict(part.arguments),
                }
            )
    return blocks


def render_messages(messages: Iterable[Message], citations: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            role, blocks = "user", _user_blocks(message, citations)
        else:
            role, blocks = "assistant", _assistant_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def render_request(request: TurnRequest, *, citations: bool, model: str) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.stream``."""
    kwargs: dict[str, Any] = {
        "model": request.model or model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": CACHE}],
        "messages": render_messages(request.messages, citations),
    }
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for t in request.tools
        ]
        tools[-1]["cache_control"] = CACHE
        kwargs["tools"] = tools
        if request.tool_choice == "none":
            kwargs["tool_choice"] = {"type": "none"}
    return kwargs


# -- parsing ------------------------------------------------------------------------------


def stop_reason(value: Any) -> StopReason:
    try:
        return StopReason(str(value or "end_turn"))
    except ValueError:
        log.info("unknown stop reason %r: treated as the end of the turn", value)
        return StopReason.END_TURN


def usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(u, "input_tokens", 0) or 0),
        output_tokens=int(getattr(u, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(u, "cache_read_input_tokens", 0) or 0),
        cache_write_tokens=int(getattr(u, "cache_creation_input_tokens", 0) or 0),
    )


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def valid_text(value: Any) -> Any:
    """``value`` (a string, or JSON made of lists and dicts) with lone surrogates replaced
    by U+FFFD: a server's JSON may escape one (``\\ud800``), which no file, database or
    terminal can store as UTF-8."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_text(k): valid_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_text(v) for v in value]
    return value


def parse_content(blocks: Iterable[dict[str, Any]]) -> AssistantMessage:
    """Content blocks of a finished message (as dicts) → a normalised assistant message."""
    parts: list[AssistantPart] = []
    seen_ids: set[str] = set()
    for block in valid_text(list(blocks)):
        kind = block.get("type")
        if kind == "text":
            cites = tuple(
                c
                for raw in block.get("citations") or []
                if isinstance(raw, dict)
                and (c := citation(raw.get("source"), raw.get("cited_text"))) is not None
            )
            parts.append(TextPart(str(block.get("text", "")), cites))
        elif kind == "tool_use":
            call_id = str(block.get("id") or "")
            if not call_id or call_id in seen_ids:
                base = call_id or "call"
                n = 2
                while f"{base}_{n}" in seen_ids:
                    n += 1
                log.info("tool call id %r repeated or missing: renamed", call_id)
                call_id = f"{base}_{n}"
            seen_ids.add(call_id)
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                log.info("tool call %s had a non-object input: replaced by {}", call_id)
                arguments = {}
            parts.append(ToolCall(call_id, str(block.get("name", "")), arguments))
    return AssistantMessage(tuple(parts))
