"""Contents titles as one clean line."""

from __future__ import annotations

TITLE_CHARS = 120


def clean_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A contents title as one line: whitespace collapsed, cut at a word boundary to about
    ``limit`` characters (with an ellipsis) when longer."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip(" ,;:.-–—") + "…"
