"""The write side of the Chinese and Japanese index: the quick test that lets a passage with
no such characters skip the pattern."""

from __future__ import annotations

import re

from core.store.cjk_index import HAS, RUN_CHARS, _may_have_runs, none_in


def _range_ends() -> list[str]:
    """The first and last character of every range of RUN_CHARS, and its lone characters."""
    ends: list[str] = []
    for found in re.finditer(r"(.)(?:-(.))?", RUN_CHARS):
        ends += [found.group(1), found.group(2) or found.group(1)]
    return ends


def test_every_run_character_passes_the_quick_test() -> None:
    ends = _range_ends()
    assert len(ends) > 20
    for char in ends:
        text = f"“Quoted” {char} text"
        assert HAS.search(text)
        assert _may_have_runs(text), hex(ord(char))


def test_western_text_fails_the_quick_test() -> None:
    for text in ("plain ASCII", "“curly” — dashes … and café", "\u3004 just below", "\ud800"):
        assert not _may_have_runs(text) or not HAS.search(text)
    assert not _may_have_runs("“curly” — dashes … and café, Ωμέγα, Привет")
    assert not _may_have_runs("\u2fff")


def test_a_book_whose_pages_hold_no_run_skips_its_passages_tests() -> None:
    """``none_in`` (the import's test of a book's pages): true only when no page holds a
    character of RUN_CHARS."""
    western = ["“curly” — dashes … and café, Ωμέγα".encode(), b"plain", b""]
    assert none_in(western)
    assert none_in([])
    for char in _range_ends():
        assert not none_in([*western, f"a page with {char} in it".encode()]), hex(ord(char))
