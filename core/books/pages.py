"""Stable virtual pages for reflowable books.

A page is about ``target`` characters of text, cut on block (paragraph) boundaries; every
chapter starts a new page; a block longer than a page is cut on sentence, then word
boundaries. The function is pure, so the same book always gives the same pages: the reader,
the search results and the agent's citations all mean the same thing by "page 42".
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.books.model import Block, Chapter, PageContent

_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+")


def split_long_text(text: str, limit: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters, preferring sentence ends,
    then spaces; a piece is cut mid-word only when a single word is longer than ``limit``."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = -1
        for match in _SENTENCE_END.finditer(window):
            if match.end() <= limit and match.start() >= limit // 3:
                cut = match.end()
        if cut <= 0:
            space = window.rfind(" ", limit // 3)
            cut = space + 1 if space > 0 else limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return [p for p in pieces if p]


def block_html(block: Block) -> str:
    frag = block.html or html.escape(block.text, quote=False)
    kind = block.kind
    if kind in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"<{kind}>{frag}</{kind}>"
    if kind == "li":
        return f"<ul><li>{frag}</li></ul>"
    if kind == "quote":
        return f"<blockquote><p>{frag}</p></blockquote>"
    if kind == "pre":
        return f"<pre>{frag}</pre>"
    if kind == "table":
        return frag
    if kind == "img":
        return f'<p class="image" align="center">{frag}</p>'
    return f"<p>{frag}</p>"


def _pieces(block: Block, target: int) -> list[Block]:
    if len(block.text) <= target * 3 // 2:
        return [block]
    return [
        Block(block.kind, part, html.escape(part, quote=False))
        for part in split_long_text(block.text, target)
    ]


def paginate(
    chapters: Sequence[Chapter], *, target: int = 2000
) -> tuple[list[PageContent], list[int]]:
    """Cut chapters into pages. Returns the pages (1-based) and the first page of each chapter.

    A chapter with no blocks still gets its first page number (the next page) so that its
    table-of-contents entry points somewhere sensible, but it adds no empty page.
    """
    cut = paginate_blocks(chapters, target=target)
    return cut.pages, cut.first_pages


@dataclass(frozen=True)
class Pagination:
    """Pages, the first page of each chapter, and the page of every block: ``block_pages[c][i]``
    is the page where block ``i`` of chapter ``c`` starts (what a heading's contents entry
    names)."""

    pages: list[PageContent]
    first_pages: list[int]
    block_pages: list[list[int]]

    def page_of(self, chapter: int | None, block: int | None = None) -> int:
        if chapter is None or not 0 <= chapter < len(self.first_pages):
            return 1
        if block is not None and 0 <= block < len(self.block_pages[chapter]):
            return self.block_pages[chapter][block]
        return self.first_pages[chapter]


def paginate_blocks(chapters: Sequence[Chapter], *, target: int = 2000) -> Pagination:
    """``paginate`` that also records the page of every block."""
    pages: list[PageContent] = []
    first_pages: list[int] = []
    block_pages: list[list[int]] = []
    whole = target * 3 // 2  # a block up to this long is never cut (see _pieces)
    for index, chapter in enumerate(chapters):
        first_pages.append(len(pages) + 1)
        group: list[Block] = []
        groups: list[list[Block]] = [group]
        where: list[int] = []
        size = 0
        for block in chapter.blocks:
            length = len(block.text)
            if length <= whole:  # the common case of the loop below, without the list
                if size and size + length > target:
                    group = []
                    groups.append(group)
                    size = 0
                where.append(len(groups) - 1)
                group.append(block)
                size += length + 2
                continue
            for n, piece in enumerate(_pieces(block, target)):
                if size and size + len(piece.text) > target:
                    group = []
                    groups.append(group)
                    size = 0
                if n == 0:
                    where.append(len(groups) - 1)
                group.append(piece)
                size += len(piece.text) + 2
        group_page: list[int] = []
        for group in groups:
            group_page.append(len(pages) + 1)
            if not group:
                continue
            number = len(pages) + 1
            pages.append(
                PageContent(
                    number=number,
                    label=str(number),
                    text="\n\n".join([b.text for b in group if b.text]),
                    html="\n".join(
                        [
                            f"<p>{b.html}</p>" if b.kind == "p" and b.html else block_html(b)
                            for b in group
                        ]
                    ),
                    chapter=index,
                )
            )
        block_pages.append([group_page[g] for g in where])
    if first_pages:
        last = max(len(pages), 1)
        first_pages = [min(p, last) for p in first_pages]
        block_pages = [[min(p, last) for p in row] for row in block_pages]
    return Pagination(pages, first_pages, block_pages)
