"""The whitespace clean-up of HTML text (htmlblocks._clean) and its fast path: the output is
exactly ``" ".join(text.split())`` for every kind of whitespace Unicode has."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from core.books.htmlblocks import _clean, html_to_blocks

WHITESPACE = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())


def reference(text: str) -> str:
    return " ".join(text.split())


def test_a_printable_string_has_no_whitespace_but_the_ascii_space() -> None:
    """What the fast path stands on, checked on every code point of this Python."""
    assert WHITESPACE.count(" ") == 1 and len(WHITESPACE) > 20
    printable_space = [hex(ord(c)) for c in WHITESPACE if c.isprintable() and c != " "]
    assert printable_space == []


def test_every_unicode_space_is_one_space() -> None:
    for c in WHITESPACE:
        for text in (f"a{c}b", f"{c}a b{c}", f"a {c}b", f"a{c}{c}b", c, f"{c} {c}"):
            assert _clean(text) == reference(text), (hex(ord(c)), text)
    assert _clean("a\u00a0b") == "a b"  # a no-break space becomes an ordinary one, as before
    assert _clean("a\u200bb") == "a\u200bb"  # a zero-width space is not whitespace


def test_edges_and_runs() -> None:
    cases = {
        "": "",
        " ": "",
        "\n": "",
        "word": "word",
        " word ": "word",
        "\nword\n": "word",
        "one\ntwo": "one two",
        "one \n two": "one two",
        "one  two": "one two",
        "one\r\ntwo": "one two",
        "one\ttwo": "one two",
        "one\x1ftwo": "one two",
        "tab\t": "tab",
        "Café déjà vu — “quoted”": "Café déjà vu — “quoted”",
    }
    for text, cleaned in cases.items():
        assert _clean(text) == cleaned == reference(text), repr(text)


@given(st.text(alphabet=st.sampled_from("ab é—\u00a0\u2009\u3000\n\r\t \x0b\x85\u2028")))
def test_same_as_split_and_join(text: str) -> None:
    assert _clean(text) == reference(text)


@given(st.text())
def test_same_as_split_and_join_on_any_text(text: str) -> None:
    assert _clean(text) == reference(text)


def test_real_book_lines(books_dir: Path) -> None:
    raw = (books_dir / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    for para in raw.split("\n\n"):
        assert _clean(para) == reference(para)


def test_blocks_from_wrapped_and_indented_html() -> None:
    _, blocks = html_to_blocks(
        "<body><p>Alice was beginning\nto get very\n    tired&#160;of sitting</p>"
        "<p> \u2003spaced\u2003out\t</p><p>\n</p><p>plain</p></body>"
    )
    assert [b.text for b in blocks] == [
        "Alice was beginning to get very tired of sitting",
        "spaced out",
        "plain",
    ]
