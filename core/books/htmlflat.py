"""A fast path of the HTML walk for flat documents: a body whose elements are only
paragraphs and headings holding plain text (no markup inside them, no styles, notes, links or
anchors to look at), as many generated books are. Each element's text comes from one lexbor
call instead of walking its nodes, and the blocks are exactly what ``htmlblocks._walk``
makes of it (tests/core/books/test_htmlflat.py compares the two on the cases that matter).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from core.books.htmlbuilder import HEADINGS, _Builder, _clean
from core.books.model import make_block

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

FLAT = HEADINGS | {"p"}


def flat_blocks(tree: LexborHTMLParser, body: LexborNode, b: _Builder) -> bool:
    """Fill ``b`` with the blocks of a flat ``body`` and answer True; False (``b`` untouched)
    for any other document, which the walk reads."""
    if (
        body.tag != "body"
        or b.wanted is not None  # anchors to place
        or b.browser  # hidden elements, link targets, embedded fonts
        or b.css is not None  # the book's CSS
        or b.notes
        or b.stage
        or b.in_notes
    ):
        return False
    direct = body.text(deep=False)  # text right in the body: the walk makes blocks of it
    if direct and not direct.isspace():
        return False
    if tree.css_first("body > * > *") is not None:  # markup inside a paragraph
        return False
    elements = list(body.iter())  # (comments too: they make the document not flat)
    tags = [node.tag or "" for node in elements]
    if not FLAT.issuperset(tags):
        return False
    blocks = b.blocks
    for node, tag in zip(elements, tags, strict=True):
        # all its text nodes (a comment may split them), as the walk joins them
        value = node.text()
        text = _clean(value)
        if text:
            escape = "&" in value or "<" in value or ">" in value
            frag = html.escape(value, quote=False) if escape else value
            blocks.append(make_block(tag, text, frag.strip(), ""))
    return True
