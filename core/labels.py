"""How pages and quotes are written for people and models: one place for each form."""

from __future__ import annotations

QUOTE_OPEN = "«"  # marks the matched words in a search snippet
QUOTE_CLOSE = "»"


def pages_label(first: int, last: int) -> str:
    """ "p. 3" or "pp. 3–5"."""
    return f"p. {first}" if first == last else f"pp. {first}–{last}"


_INVISIBLE_CONTROLS = dict.fromkeys(
    [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


def display_title(title: str) -> str:
    """A book's title for a window title or a one-line label: one line, without control
    characters or the direction overrides (U+202E) that would flip the text after it. A
    title isolated right-to-left as a whole (``dir="rtl"`` in its EPUB) keeps its isolate:
    it closes itself, so nothing after it flips."""
    if len(title) > 2 and title[0] == "\u2067" and title[-1] == "\u2069":
        inner = display_title(title[1:-1])
        return f"\u2067{inner}\u2069" if inner != "Untitled" else inner
    return " ".join(title.translate(_INVISIBLE_CONTROLS).split()) or "Untitled"
