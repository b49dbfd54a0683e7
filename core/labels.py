"""How pages and quotes are written for people and models: one place for each form."""

from __future__ import annotations

QUOTE_OPEN = "«"  # marks the matched words in a search snippet
QUOTE_CLOSE = "»"


def pages_label(first: int, last: int) -> str:
    """ "p. 3" or "pp. 3–5"."""
    return f"p. {first}" if first == last else f"pp. {first}–{last}"
