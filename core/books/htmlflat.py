"""A fast path of the HTML walk for flat documents: a body whose elements are only
paragraphs and headings holding plain text (no markup inside them, no styles, notes, links or
anchors to look at), as many generated books are. Each element's text comes from one lexbor
call instead of walking its nodes, and the blocks are exactly what ``htmlblocks._walk``
makes of it (tests/core/books/test_htmlflat.py compares the two on the cases that matter).
"""

from __future__ import annotations

import html
import re
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
    values = [node.text() for node in elements]  # (all its text nodes, as the walk joins)
    whole = "\x00".join(values)  # (not a space: no run of spaces across two paragraphs)
    # (most books have nothing to escape: one look at the whole document rather than three
    # at every paragraph)
    escapes = "&" in whole or "<" in whole or ">" in whole
    blocks = b.blocks
    texts = _cleaned(values, whole, tree.raw_html)
    for tag, value, text in zip(tags, values, texts, strict=True):
        if text:
            escape = escapes and ("&" in value or "<" in value or ">" in value)
            frag = (html.escape(value, quote=False) if escape else value).strip()
            # (the same string as the text when equal: a second copy of most of the book's
            # text would be kept for nothing; the pages see one look, core.books.pages._plain)
            blocks.append(make_block(tag, text, text if frag == text else frag, ""))
    return True


OTHER_SPACES = "\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680" + "".join(
    map(chr, [*range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
)
"""Every character ``str.isspace`` knows but the ASCII space and the line end
(tests/core/books/test_htmlflat.py checks them against every code point)."""


_CONTROL_SPACES = tuple(c.encode() for c in OTHER_SPACES[:8])
_WIDE_SPACES = re.compile(rb"\xe2(?:\x80[\x80-\x8a\xa8\xa9\xaf]|\x81\x9f)")
"""The UTF-8 of the spaces U+2000–U+205F in ``OTHER_SPACES`` (one pass over the bytes: a
text with a byte order mark or a letter past U+00FF is stored two bytes a character, and
looking for a character whose low byte is 0 in it stops at every letter)."""


def _other_spaces(whole: str, raw: bytes) -> bool:
    """Whether ``whole``, text of the document ``raw`` (the UTF-8 bytes lexbor parsed), holds
    white space other than the space and the line end. Without character references every
    character of the text is in ``raw`` as it is, so a byte looked for there (one memchr)
    rules out a kind of space; only the ones led by the byte of curly quotes and dashes
    (U+2000–U+205F) are looked for in the text."""
    if b"&" in raw:  # (a reference can make any)
        return any(c in whole for c in OTHER_SPACES)
    if any(c in raw for c in _CONTROL_SPACES):
        return True
    if raw.isascii():
        return False
    return (
        (b"\xc2" in raw and ("\x85" in whole or "\xa0" in whole))
        or (b"\xe1" in raw and "\u1680" in whole)
        or (b"\xe3" in raw and "\u3000" in whole)
        or (_WIDE_SPACES.search(raw) is not None and any(c in whole for c in OTHER_SPACES[11:-1]))
    )


def _cleaned(values: list[str], whole: str, raw: bytes) -> list[str] | map[str]:
    """``map(_clean, values)``, looked at once in ``whole`` (the values joined by a NUL):
    when the text holds no white space but single spaces and line ends, cleaning a
    paragraph is turning its line ends into spaces and trimming it (``_clean`` looks at
    every character of every paragraph with ``str.isprintable``, slower than looking for
    each kind of space in turn)."""
    if _other_spaces(whole, raw):
        return map(_clean, values)
    if "\n" not in whole:
        return map(_clean, values) if "  " in whole else [v.strip(" ") for v in values]
    if "  " in whole.replace("\n", " "):
        return map(_clean, values)
    return [v.replace("\n", " ").strip(" ") if "\n" in v else v.strip(" ") for v in values]
