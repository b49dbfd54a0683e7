"""The parsers' fast paths give exactly what the general code gives (issue 17, item 14: the
speed itself is measured by tests/bench/bench_anchor.py, not here)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.books import htmlblocks
from core.books.model import Block, Chapter
from core.books.pages import block_html, paginate_blocks

EDGE_CASES = """<html><head><title>  Edge\u00a0cases </title></head><body id="top">
<h1>Plain heading</h1>
<h2 id="h2">Heading <em>with</em> markup</h2>
<p>Plain paragraph, wrapped
   and indented.</p>
<p id="para">Wanted &amp; escaped &lt;text&gt;</p>
<p>   </p>
<p>\u00a0</p>
<p></p>
<p> <b> </b><br/>\u2003</p>
<p>Text and <b>bold</b> and <a href="https://example.org/">a link</a>.</p>
<p><a name="old">Old-style anchor</a></p>
<ul><li>Item one</li><li id="li2">Item <i>two</i></li><li></li></ul>
<dl><dt>Term</dt><dd>Definition</dd></dl>
<blockquote><p>Quoted once.</p><p>Quoted twice.</p></blockquote>
<div>Loose text in a div</div>
<div><p>Nested paragraph</p> tail text</div>
<pre>  keep
  lines  </pre>
<pre><p>paragraph inside pre</p></pre>
<table><tr><td><p>cell paragraph</p></td><td>plain cell</td></tr></table>
<section><h3>Section heading</h3><p>Section text.</p></section>
bare body text <p>after bare text</p>
<p>Image <img src="pic.png" alt="a picture"> inside</p>
<p><img src="pic.png" alt="only an image"></p>
</body></html>"""


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(htmlblocks, "_text_only", lambda node, b: False)


def _documents(books_dir: Path) -> list[str]:
    docs = [EDGE_CASES]
    for name in ("alice_in_wonderland.epub", "metamorphosis.epub"):
        with zipfile.ZipFile(books_dir / name) as z:
            docs += [
                z.read(n).decode("utf-8")
                for n in z.namelist()
                if n.endswith((".xhtml", ".html", ".htm"))
            ]
    return docs


def test_text_only_paragraphs_match_the_full_walk(
    books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents(books_dir)
    assert len(docs) > 10
    wanted = frozenset(["top", "h2", "para", "old", "li2", "missing"])

    def resolve(src: str) -> str:
        return f"book:/{src}"

    fast = [htmlblocks.html_document(d, resolve, wanted) for d in docs]
    _slow(monkeypatch)
    slow = [htmlblocks.html_document(d, resolve, wanted) for d in docs]
    assert fast == slow
    title, blocks, anchors = fast[0]
    assert title == "Edge cases"
    assert [b.text for b in blocks[:4]] == [
        "Plain heading",
        "Heading with markup",
        "Plain paragraph, wrapped and indented.",
        "Wanted & escaped <text>",
    ]
    assert blocks[3].html == "Wanted &amp; escaped &lt;text&gt;"
    assert anchors["para"] == 3 and "missing" not in anchors
    # paragraphs of white space (even around inline tags) give no block; an image alone does
    assert [b.kind for b in blocks] == (
        "h1 h2 p p p p li li li li quote quote p p p pre p table h3 p p p p img".split()
    )
    assert blocks[-1] == htmlblocks.Block(
        "img", "[Illustration: only an image]", '<img src="book:/pic.png" alt="only an image">'
    )
    assert sum(len(b) for _, b, _ in fast) > 1000, "the real books gave their blocks"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["p", "h2", "li", "div", "blockquote"]),
            st.text(alphabet="ab <>&\n\u00a0\t", max_size=12),
        ),
        max_size=8,
    )
)
def test_generated_documents_match_the_full_walk(elements: list[tuple[str, str]]) -> None:
    from html import escape

    body = "".join(f"<{tag}>{escape(text)}</{tag}>" for tag, text in elements)
    fast = htmlblocks.html_document(f"<body>{body}</body>")
    saved = htmlblocks._text_only
    htmlblocks._text_only = lambda node, b: False
    try:
        slow = htmlblocks.html_document(f"<body>{body}</body>")
    finally:
        htmlblocks._text_only = saved
    assert fast == slow


def test_pages_keep_whole_blocks_up_to_one_and_a_half_targets() -> None:
    target = 100
    whole = "word " * 29 + "word."  # 150 characters: 1.5 targets, never cut
    long = whole + "x"  # 151: cut at the sentence end / a space
    cut = paginate_blocks(
        [
            Chapter("one", (Block("p", whole, ""), Block("p", "short", "<b>short</b>"))),
            Chapter("two", (Block("p", long, ""), Block("h2", "Head", "Head"))),
        ],
        target=target,
    )
    texts = [p.text for p in cut.pages]
    # a chapter's short last block stays on the page before instead of making a tiny page
    assert texts[0] == whole + "\n\nshort"
    assert len(texts) == 3 and long not in texts, "the 151-character block was cut"
    assert len(texts[1]) <= target and texts[2].endswith("word.x\n\nHead")
    assert (texts[1] + " " + texts[2]).split() == (long + " Head").split()
    assert cut.pages[0].html == f"<p>{whole}</p>\n<p><b>short</b></p>"
    assert cut.pages[-1].html.endswith("<h2>Head</h2>")
    assert cut.block_pages == [[1, 1], [2, 3]]


def test_paragraph_html_is_block_html() -> None:
    blocks = (Block("p", "a < b", ""), Block("p", "x", "<i>x</i>"), Block("quote", "q", "q"))
    page = paginate_blocks([Chapter("c", blocks)]).pages[0]
    assert page.html == "\n".join(block_html(b) for b in blocks)
    assert page.html.startswith("<p>a &lt; b</p>")


_WORDS = st.text(alphabet="ab &<>\n\u00a0", min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["p", "p", "p", "h2"]), _WORDS, st.sampled_from(["esc", "b"])),
        min_size=1,
        max_size=4,
    )
)
def test_a_page_of_plain_paragraphs_shows_as_its_html_did(
    parts: list[tuple[str, str, str]],
) -> None:
    """A page that is nothing but its text's paragraphs has the HTML "" (the store keeps it
    so and shows ``plain_html`` of its text): what is shown is the HTML made before."""
    from core.domain.markup import escape_text
    from core.store.packing import plain_html

    blocks = tuple(
        Block(kind, text, escape_text(text) if how == "esc" else f"<b>{escape_text(text)}</b>")
        for kind, text, how in parts
    )
    page = paginate_blocks([Chapter("c", blocks)], target=10_000).pages[0]
    before = "\n".join(block_html(b) for b in blocks)
    assert (plain_html(page.text) if page.html == "" else page.html) == before
    plain = all(b.kind == "p" and b.text and "\n" not in b.text and b.html == escape_text(b.text)
                for b in blocks)  # fmt: skip
    assert (page.html == "") == plain
