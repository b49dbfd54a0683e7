"""Tool calls a model wrote as text. Some small local models (Qwen2.5-Coder on llama.cpp) write
their call as a JSON code block (or between ``<tool_call>`` tags) instead of a tool call, and
the server passes it on as text. Such a reply is read as the call it means, but only when that
is safe: every block names a tool that was offered, with an object of arguments, and the
words around the blocks are few (a reply that answers and shows some JSON is an answer)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from core.agent.types import ToolCall

MAX_WORDS_AROUND = 40  # more prose than this around the blocks: the reply is an answer
_BLOCK = re.compile(
    r"```(?:json|tool_call|tool)?\s*\n?(.*?)```|<tool_call>(.*?)</tool_call>", re.DOTALL | re.I
)
_ARGUMENTS = ("arguments", "parameters", "input", "args")


def _one(raw: Any, offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(raw, dict):
        return None
    name = raw.get("name") or raw.get("tool") or raw.get("function")
    if isinstance(name, dict):  # {"function": {"name": ..., "arguments": ...}}
        raw, name = name, name.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    args: Any = next((raw[k] for k in _ARGUMENTS if k in raw), {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return (name, args) if isinstance(args, dict) else None


def text_tool_calls(text: str, offered: Collection[str], turn: int = 0) -> tuple[ToolCall, ...]:
    """The tool calls ``text`` writes out, or () when it is not (safely) a call."""
    blocks = [(m.group(1) or m.group(2) or "").strip() for m in _BLOCK.finditer(text)]
    around = _BLOCK.sub(" ", text)
    if not blocks:
        stripped = text.strip()
        if not (stripped.startswith("{") and stripped.endswith("}")):
            return ()
        blocks, around = [stripped], ""
    if len(around.split()) > MAX_WORDS_AROUND:
        return ()
    calls: list[ToolCall] = []
    for block in blocks:
        try:
            raw = json.loads(block)
        except ValueError:
            return ()
        items = raw if isinstance(raw, list) else [raw]
        for item in items:
            one = _one(item, offered)
            if one is None:
                return ()
            calls.append(ToolCall(f"text_call_{turn}_{len(calls)}", one[0], one[1]))
    return tuple(calls)
