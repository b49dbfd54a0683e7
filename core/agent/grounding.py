"""Whether an answer was written with the book in front of the model.

A model that never searched or read the book (a small local model that never calls a tool,
the ``llm-only`` strategy) answers from memory and may invent. The window, ``margin ask``
and ``history --json`` say so with the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NOT_CHECKED = "Not checked against the book"
NOT_CHECKED_CLI = f"{NOT_CHECKED}: the model answered without looking at the book."


def checked_against_book(tool_calls: Sequence[Any], passages: Sequence[Any]) -> bool:
    """True when the run looked at the book: a tool ran (a search, a page read) or the model
    was given passages."""
    return bool(tool_calls or passages)
