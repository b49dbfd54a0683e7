"""KOReader positions on a Standard Ebooks EPUB open Margin at the same paragraph, and back.

The book is Standard Ebooks' *A Christmas Carol* in tests/fixtures/books (built by
tests/bench/spoiler_books.py from the public repository; ``$MARGIN_SPOILER_BOOKS`` points at
another folder holding it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.app import Margin
from core.store.anchors import BookText, collapse
from core.store.library import Library
from core.sync.xpointer import from_margin, positions_of, to_margin
from tests.bench.spoiler_books import CAROL


@pytest.mark.skipif(not CAROL.is_file(), reason=f"no Standard Ebooks EPUB at {CAROL}")
def test_every_paragraph_of_a_christmas_carol_round_trips(library: Library) -> None:
    book = Margin.of(library).import_book(CAROL).book
    positions = positions_of(Path(book.file_path))
    pages = BookText(library.page_texts(book.id))
    checked = 0
    for node in range(0, len(positions.nodes), 9):
        text = positions.nodes[node].text
        if len(text.strip()) < 40 or "/p" not in positions.nodes[node].element:
            continue
        offset = len(text) - len(text.lstrip())
        xpointer = positions.xpointer(node, offset)  # as KOReader writes a paragraph's start
        place = to_margin(positions, pages, xpointer, positions.fraction(node, offset))
        assert place is not None, xpointer
        page_text = collapse(library.page(book.id, place.page).text)
        assert collapse(text)[:30] in page_text or place.fuzzy, xpointer
        assert from_margin(positions, pages, place.page, place.offset) == xpointer
        checked += 1
    assert checked > 50
