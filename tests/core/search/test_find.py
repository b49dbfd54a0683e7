"""Find in book: every match in book order, whole-word and exact-phrase options, matches that
run from one page onto the next, and speed on a long book."""

from __future__ import annotations

import time

import pytest

from core.errors import MarginError
from core.search.find import compile_query, find_in_pages

PAGES = [
    (1, "The Cheshire Cat grinned.\n\nA cat, a catalogue and a CAT."),
    (2, "Nothing here but the Cheshire"),
    (3, "cat again, at the top of page three. The cat."),
]


def test_matches_come_in_book_order_with_their_page_offset_and_rank_on_the_page() -> None:
    found = find_in_pages(PAGES, "cat")
    assert [(m.page, m.nth) for m in found] == [(1, 0), (1, 1), (1, 2), (1, 3), (3, 0), (3, 1)]
    first = found[0]
    assert PAGES[0][1][first.offset : first.offset + 3] == "Cat"
    assert first.before == "The Cheshire" and first.after.startswith("grinned.")


def test_whole_words_skip_longer_words() -> None:
    assert len(find_in_pages(PAGES, "cat", whole_word=True)) == 5  # not "catalogue"


def test_exact_phrase_keeps_case_and_punctuation() -> None:
    assert [m.text for m in find_in_pages(PAGES, "CAT", exact=True)] == ["CAT"]
    assert find_in_pages(PAGES, "cat a catalogue", exact=True) == []
    assert len(find_in_pages(PAGES, "cat a catalogue")) == 1  # ", " between the words is fine


def test_a_phrase_that_runs_onto_the_next_page_belongs_to_the_page_where_it_starts() -> None:
    (match,) = find_in_pages(PAGES, "Cheshire cat again")
    assert (match.page, match.end_page) == (2, 3)
    assert match.text == "Cheshire\n\ncat again"


def test_an_empty_query_says_what_to_do() -> None:
    with pytest.raises(MarginError, match="Type a word or a phrase"):
        compile_query("   ")


def test_regex_characters_are_plain_text() -> None:
    pages = [(1, "costs $5 (a lot) [really]. a.b")]
    assert [m.text for m in find_in_pages(pages, "$5 (a lot)")] == ["$5 (a lot)"]
    assert find_in_pages(pages, "a.c") == []


def test_limit_stops_the_scan() -> None:
    assert len(find_in_pages([(1, "a " * 100)], "a", limit=7)) == 7


def test_a_long_book_is_searched_in_milliseconds() -> None:
    text = "It was the best of times, it was the worst of times. " * 38  # ~2,000 characters
    pages = [(n, f"Page {n}. {text}") for n in range(1, 401)]
    started = time.perf_counter()
    found = find_in_pages(pages, "worst of times", limit=100_000)
    took = time.perf_counter() - started
    assert len(found) == 400 * 38
    assert [m.page for m in found] == sorted(m.page for m in found)
    assert took < 0.5, f"find took {took:.3f} s on 400 pages"


def test_only_the_first_matches_carry_snippets_but_all_are_found() -> None:
    pages = [(n, "the cat sat. " * 10) for n in range(1, 6)]
    found = find_in_pages(pages, "cat", snippets=3)
    assert len(found) == 50
    assert all(m.before for m in found[1:3]) and not any(m.before or m.after for m in found[3:])
    assert [m.nth for m in found[:11]] == [*range(10), 0]


def test_text_whose_lower_case_changes_length_is_still_found_at_the_right_place() -> None:
    pages = [(1, "İstanbul and the cat"), (2, "another CAT")]
    found = find_in_pages(pages, "cat")
    assert [(m.page, m.offset, m.text) for m in found] == [(1, 17, "cat"), (2, 8, "CAT")]
