"""The flat-document fast path (core/books/htmlflat.py) gives exactly the blocks the HTML walk
gives, and leaves every other document to the walk."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from core.books import htmlblocks
from core.books.htmlblocks import html_document
from core.books.htmlbuilder import _Builder
from core.books.htmlflat import OTHER_SPACES, flat_blocks

FLAT = {
    "prose": "<h1>Chapter 1</h1>\n  <p>It was a dark night.</p>\n  <p>Then   rain.</p>",
    "escapes": "<h2>A &amp; B</h2><p>1 &lt; 2 &gt; 0 &quot;q&quot; it&#8217;s</p>",
    "white space": "<p>\r\n  line one\r\n  line two\t</p>\n<p>\u00a0</p>\n<p> </p><p></p>",
    "odd spaces": "<p>\ufeffa\u2009b\u00a0\u00a0c\u3000</p><h3>\n</h3><p>x\u2028y</p>",
    "comments inside": "<p>a <!-- note --> b</p><p><!--c--> c</p><p><!--only--></p>",
    "body white space": "<p>a</p>\n\u00a0\n<p>b</p>\t<h4>c</h4>",
    "single spaces": "<h1> A title </h1><p>a b “c”</p><p> d</p>",
    "line ends": "<p>one\ntwo</p><p>\nthree\n</p><p>x</p>",
    "a line end beside a space": "<p>one \ntwo</p><p>three</p>",
    "a NUL": "<p>a\x00b</p><p>c</p>",
    "references to spaces": "<p>a&#8195;b</p><p>c&#32;&#32;d</p><p>e&#9;f</p>",
    "a tab": "<p>a\tb</p>",
    "an ideographic space": "<p>a\u3000b</p>",
    "an ogham space": "<p>a\u1680b</p>",
    "a next-line": "<p>a\x85b \u00e9</p>",
    "a thin space among quotes": "<p>“a”\u2009b — c</p>",
    "quotes and no odd space": "<p>“a” — b…</p><p>\u00e9\u3001\u1681</p>",
}
NOT_FLAT = {
    "inline markup": "<p>a <i>b</i></p>",
    "text in the body": "<p>a</p> loose words <p>b</p>",
    "comment in the body": "<p>a</p><!-- c --><p>b</p>",
    "a list": "<ul><li>a</li></ul>",
    "a link target": '<p id="x">a</p><p><a href="#x">b</a></p>',
    "notes": '<p epub:type="footnote">a</p>',
}


def test_other_spaces_are_every_space_but_two() -> None:
    """The whole-document look (htmlflat._cleaned) must know every kind of white space."""
    import sys

    spaces = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(OTHER_SPACES) == spaces - {" ", "\n"}


def _page(body: str) -> str:
    return f"<html><head><title>T</title></head><body>{body}</body></html>"


def _walked(markup: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    with monkeypatch.context() as patch:
        patch.setattr(htmlblocks, "flat_blocks", lambda *args: False)
        return html_document(markup, doc="c.xhtml", ref_labels={}, link_targets={})


@pytest.mark.parametrize("name", FLAT)
def test_a_flat_document_gives_the_walks_blocks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    markup = _page(FLAT[name])
    for data in (markup, markup.encode("utf-8")):
        taken: list[bool] = []

        def spy(*args: object, taken: list[bool] = taken) -> bool:
            taken.append(flat_blocks(*args))  # type: ignore[arg-type]
            return taken[-1]

        monkeypatch.setattr(htmlblocks, "flat_blocks", spy)
        fast = html_document(data, doc="c.xhtml", ref_labels={}, link_targets={})
        monkeypatch.undo()
        assert taken == [True]  # the fast path read it
        assert fast == _walked(markup, monkeypatch)
        assert fast[1], "the document has blocks"


@pytest.mark.parametrize("name", NOT_FLAT)
def test_any_other_document_is_left_to_the_walk(name: str) -> None:
    tree = LexborHTMLParser(_page(NOT_FLAT[name]))
    b = _Builder(None, None, "c.xhtml", {})
    b.notes = tree.css_first("[epub\\:type]") is not None
    b.link_ids = {"x"} if tree.css_first("a") is not None else set()
    b.browser = bool(b.link_ids)
    assert tree.body is not None
    assert flat_blocks(tree, tree.body, b) is False
    assert b.blocks == []
