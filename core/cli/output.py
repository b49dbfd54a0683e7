"""What the CLI prints, made safe: ``clean`` (``say``/``print_json``) for text from books and
models, which may hold terminal escape sequences (ESC/CSI, OSC 52 sets the clipboard) and
lone surrogates (which cannot be written as UTF-8). Light: the read-only
``margin search --all`` prints through it without loading the rest of Margin."""

from __future__ import annotations

import re
import sys
from typing import Any

# C0 controls except \t and \n, DEL, C1 controls (U+0080..U+009F), bidirectional overrides,
# embeddings and isolates (a title with U+202E prints reversed, issue 46 item 12), and lone
# surrogates.
_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udfff]"
)


def clean(text: object) -> str:
    """``text`` safe to print: no terminal controls (newline and tab kept), no lone
    surrogates (each becomes U+FFFD)."""
    value = str(text)
    return _UNSAFE.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else "", value)


def say(*parts: object, file: Any = None, end: str = "\n", sep: str = " ") -> None:
    """``print`` for text that may come from a book or a model."""
    stream = sys.stdout if file is None else file
    stream.write(clean(sep.join(str(p) for p in parts)) + end)


def print_json(value: Any) -> None:
    """JSON on stdout: C0 controls are escaped by JSON itself, DEL and C1 controls are
    escaped here (``\\u009b``), lone surrogates become U+FFFD."""
    import json  # (here: a command printing lines needs none of it, 1.4 ms, issue 41)

    text = json.dumps(clean_json_surrogates(value), ensure_ascii=False, indent=2, default=str)
    text = re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


def clean_json_surrogates(value: Any) -> Any:
    """JSON output keeps every character (JSON escapes controls) but lone surrogates."""
    if isinstance(value, str):
        return re.sub(r"[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, dict):
        return {clean_json_surrogates(k): clean_json_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json_surrogates(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses

        return clean_json_surrogates(dataclasses.asdict(value))
    return value
