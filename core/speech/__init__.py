"""Reading aloud without Qt: what is said, from where, and what listening means.

``plan`` cuts pages into utterances (one a sentence, with their page and offsets);
``listening`` holds the rule that a page read aloud to its end counts as read. The window's
speech (Qt's text to speech) lives in ``desktop/readaloud``; ``margin speak`` uses both.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from core.speech.plan import Utterance, page_utterances, plan

__all__ = ["NoText", "Utterance", "page_utterances", "plan", "plan_book"]


class NoText(Exception):
    """Nothing to read aloud from here on; the message says why, for people."""


def plan_book(
    page_text: Callable[[int], str], page_count: int, page: int, fmt: str = "", offset: int = 0
) -> Iterator[Utterance]:
    """``plan`` from ``page``, or ``NoText`` when nothing from there on can be said."""
    utterances = plan(page_text, page_count, page, offset)
    first = next(utterances, None)
    if first is None:
        if fmt == "pdf":
            raise NoText(
                "this PDF has no text to read aloud from page "
                f"{page} on: its pages are pictures (a scan). Open a PDF with a text layer, "
                "or run it through text recognition (OCR) first."
            )
        raise NoText(f"there is no text to read aloud from page {page} to the end of the book.")
    return itertools.chain([first], utterances)
