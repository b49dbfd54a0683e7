"""The book tools (core/agent/tools.py), run directly: the bound is read_to, never the page."""

from __future__ import annotations

from typing import Any

import pytest

from core.agent.tools import ToolContext, default_tools
from core.agent.types import BookText, HiddenAfter, Note, Passage
from core.search import BookSearch
from core.store.library import BookInfo, Library


@pytest.fixture
def jumped(library: Library, alice: BookInfo) -> BookInfo:
    """Read to p. 21, then jumped ahead to p. 80 (a citation or Find result)."""
    library.set_position(alice.id, 21)
    return library.set_page(alice.id, 80)


def context(library: Library, book: BookInfo) -> ToolContext:
    return ToolContext(library, BookSearch(library.db), book, book.spoiler_bound)


def run(library: Library, book: BookInfo, name: str, **arguments: Any) -> Any:
    return default_tools().run(context(library, book), name, arguments)


def test_the_bound_is_read_to_not_the_page_on_screen(library: Library, jumped: BookInfo) -> None:
    assert (jumped.page, jumped.read_to, jumped.spoiler_bound) == (80, 21, 21)
    out = run(library, jumped, "search_book", query="Queen Hearts croquet", top_k=10)
    assert all(p.last_page <= 21 for p in out.passages)
    hidden = [p for p in out.parts if isinstance(p, HiddenAfter)]
    assert hidden == [HiddenAfter(21)], "says only that the book goes on, with no count"
    refused = run(library, jumped, "read_pages", start=40)
    assert refused.is_error and "page 21" in refused.parts[0].text
    clipped = run(library, jumped, "read_pages", start=19, end=30)
    assert [p.first_page for p in clipped.passages] == [19, 20, 21]
    assert any(isinstance(p, Note) and "after 21" in p.text for p in clipped.parts)
    contents = run(library, jumped, "table_of_contents")
    listing = next(p for p in contents.parts if isinstance(p, BookText)).text
    assert "CHAPTER III" in listing and "CHAPTER IV" not in listing and "more entries" in listing


def test_no_count_tied_to_the_query_leaks(library: Library, jumped: BookInfo) -> None:
    """'N more matches later' would answer yes/no for any phrase: two queries, one that
    occurs later and one that never does, must look the same."""
    later = run(library, jumped, "search_book", query='"Gryphon"')
    never = run(library, jumped, "search_book", query='"purple elephant"')
    assert not later.passages and not never.passages
    assert later.parts[1:] == never.parts[1:] == (HiddenAfter(21),)


def test_notes_beyond_the_bound_or_without_a_page_stay_hidden(
    library: Library, jumped: BookInfo
) -> None:
    library.add_note(jumped.id, "early note", page=5)
    library.add_note(jumped.id, "late note", page=70)
    library.add_note(jumped.id, "a note about the whole book")  # no page: could be anything
    listing = run(library, jumped, "list_notes")
    text = " ".join(p.text for p in listing.parts if isinstance(p, BookText))
    assert "early note" in text and "late note" not in text and "whole book" not in text
    saved = run(library, jumped, "save_note", text="The Caterpillar smokes")
    assert not saved.is_error and saved.pages == (21,), "saved while bounded: about pages ≤ 21"
    finished = library.set_finished(jumped.id, True)
    everything = run(library, finished, "list_notes")
    text = " ".join(p.text for p in everything.parts if isinstance(p, BookText))
    assert "late note" in text and "whole book" in text


@pytest.mark.parametrize(
    "arguments",
    [{"start": "x"}, {"start": 10**20}, {"start": True}, {"start": 5, "end": 2}, {"start": 0}],
)
def test_bad_arguments_are_errors_the_model_can_read(
    library: Library, jumped: BookInfo, arguments: dict[str, Any]
) -> None:
    out = run(library, jumped, "read_pages", **arguments)
    assert out.is_error and isinstance(out.parts[0], Note) and out.parts[0].text


def test_passages_carry_book_pages_and_title(library: Library, alice: BookInfo) -> None:
    out = run(library, library.get_book(alice.id), "search_book", query="Cheshire grin")
    assert out.passages and all(isinstance(p, Passage) for p in out.passages)
    first = out.passages[0]
    assert first.book_id == alice.id and first.title.startswith("Alice")
    assert "Cheshire" in first.text or "cheshire" in first.text.lower()
