"""``escape_text`` is ``html.escape(text, quote=False)`` (the text parser, the pages and the
stored pages' check use it without loading ``html``)."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from core.domain.markup import escape_text


@given(st.text(alphabet=st.sampled_from("a&<>\"' \n’é漢"), max_size=40))
def test_escape_text_is_html_escape_without_quotes(text: str) -> None:
    assert escape_text(text) == html.escape(text, quote=False)


def test_a_text_with_nothing_to_escape_is_itself() -> None:
    text = "He said “no”, and that was all.\n\nNext."
    assert escape_text(text) is text
    assert escape_text("a < b & c > d") == "a &lt; b &amp; c &gt; d"
