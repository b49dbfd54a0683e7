"""The intents that cross the window: one small dataclass per request.

The reader emits an ``AskRequest`` through ``MainWindow.requestAsk``; the chat pane receives it.
"""

from __future__ import annotations

from dataclasses import dataclass

ACTIONS = ("ask", "explain", "define", "summarize", "translate")


@dataclass(frozen=True)
class AskRequest:
    """A selection handed from the reader to the chat pane.

    ``action`` is one of ``ACTIONS``. For "ask" the chat pane shows the selection as a quoted
    card above the input and lets the reader type the question; every other action sends at
    once with ``prompt`` (already filled from ``prompts/actions/<action>.md``).
    """

    book_id: int
    page: int
    text: str
    action: str = "ask"
    prompt: str = ""
    near: int = -1  # where the selection starts in the page's stored text (-1: unknown)


@dataclass(frozen=True)
class OpenPageRequest:
    """Turn the reader to ``page`` of ``book_id`` and mark ``quote`` there when found (the
    occurrence nearest ``near``, an offset in the page's stored text, when given)."""

    book_id: int
    page: int
    quote: str = ""
    near: int = -1
