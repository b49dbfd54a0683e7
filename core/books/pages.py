"""Stable virtual pages for reflowable books.

A page is about ``target`` characters of text, cut on block (paragraph) boundaries; every
chapter starts a new page; a heading stays with the text after it and a chapter's short last
block with the page before; a block longer than a page is cut into even pieces at sentence
ends (verse: line ends), then clause ends, then spaces, keeping its formatting and links (core.books.pagecuts). The
function is pure, so the same book always gives the same pages: the reader,
the search results and the agent's citations all mean the same thing by "page 42".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from core.books.bookcss import continued, styled
from core.books.model import Block, Chapter, PageContent, make_page
from core.books.pagecuts import piece_html, split_html, split_long_text
from core.domain.markup import escape_text

_TAG = re.compile(r"<[^>]*>")
_HEADING = re.compile(r"<h[1-6][^>]*>.*?</h[1-6]>", re.S)
_ANCHOR_NAME = re.compile(r'<a name="([^"]*)"></a>')
_LINK_HREF = re.compile(r'(class="noteref" )?href="margin:([^"]*)"')
HEADING_KINDS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6"])
SUBTITLE_CHARS = 120
SMALL_TAIL = 200
"""A chapter's last block up to this long stays on the page before rather than making a page
of its own ("THE END", a date line, a signature)."""


_LINKING = 'href="margin:'  # what _LINK_HREF needs (a longer needle is found faster than
_NAMING = "<a name="  # "margin:", which book CSS also holds); what _ANCHOR_NAME needs


def resolve_note_links(
    pages: list[PageContent],
    keep: frozenset[str] = frozenset(),
    found: tuple[list[int], list[int]] | None = None,
) -> list[PageContent]:
    """Turn the links the parser left inside the book (``href="margin:DOC#ID"``: note
    references, back links, cross-references) into links to the page where their target
    landed (``href="page:N"``). A link to an id that left no anchor goes to its document's
    first page (``DOC#``); one whose target is not in the book is left without a destination
    (``page:0``). A note reference names its note (``page:N#DOC#ID``) and keeps the note's
    anchor, so the reader can show the note in a pop-up; anchors named in ``keep`` (where
    printed pages start) stay too; other anchors are dropped. ``found``: the pages holding
    links and those holding anchors, when the caller knows (else each page is looked at)."""
    if found is not None:
        linking, naming = found  # (the pages holding links, and those holding anchors)
    else:
        linking, naming = [], []  # each page is looked through once
        for i, page in enumerate(pages):
            if page.html:
                if _LINKING in page.html:
                    linking.append(i)
                if _NAMING in page.html:
                    naming.append(i)
    if not linking and not naming:
        return pages
    where: dict[str, int] = {}
    for i in naming:
        for name in _ANCHOR_NAME.findall(pages[i].html or ""):
            where.setdefault(name, pages[i].number)
    noted: set[str] = set()

    def link(match: re.Match[str]) -> str:
        target = match.group(2)  # escaped as the anchors' names are
        page = where.get(target) or where.get(target.partition("#")[0] + "#", 0)
        if match.group(1) and page and target in where:
            noted.add(target)
            return f'class="noteref" href="page:{page}#{target}"'
        return f'href="page:{page}"'

    def anchor(match: re.Match[str]) -> str:
        return match.group(0) if match.group(1) in noted or match.group(1) in keep else ""

    # every link first (they say which anchors a note reference keeps), then the anchors
    linked = {i: _LINK_HREF.sub(link, pages[i].html or "") for i in linking}
    out = list(pages)
    for i in naming:
        out[i] = replace(
            pages[i], html=_ANCHOR_NAME.sub(anchor, linked.pop(i, pages[i].html or ""))
        )
    for i, text in linked.items():
        if text is not pages[i].html:
            out[i] = replace(pages[i], html=text)
    return out


def block_html(block: Block) -> str:
    """A block as page HTML, with the book's style kept for it (core.books.bookcss)."""
    return styled(_block_html(block), block.style)


def _block_html(block: Block) -> str:
    frag = block.html or escape_text(block.text)
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
    parts = split_long_text(block.text, target)
    frags = split_html(block.html, block.text, parts) if block.html else None
    if frags is None:
        frags = [piece_html(part) for part in parts]
    later = continued(block.style)
    return [
        Block(block.kind, part, frag, block.style if i == 0 else later)
        for i, (part, frag) in enumerate(zip(parts, frags, strict=True))
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


def _next_page(groups: list[list[Block]], where: list[int]) -> tuple[list[Block], int]:
    """Start the next page (the new group and its size); headings at the end of the page
    before come along, so a heading stays with the text that follows it."""
    group = groups[-1]
    keep = len(group)
    while keep and (
        group[keep - 1].kind in HEADING_KINDS
        or (  # a subtitle: a short line right after a heading ("XXVI" / "Knights and Squires")
            keep >= 2
            and group[keep - 2].kind in HEADING_KINDS
            and len(group[keep - 1].text) <= SUBTITLE_CHARS
        )
    ):
        keep -= 1
    moved = group[keep:]
    del group[keep:]
    groups.append(moved)
    for k in range(len(moved)):
        where[-1 - k] = len(groups) - 1
    return moved, sum(len(b.text) + 2 for b in moved)


class ChapterCut(NamedTuple):
    """One chapter cut into pages, numbered from its own first page (0): what
    ``paginate_blocks`` needs of it. A pure function of the chapter's blocks, so it can be
    made anywhere (an EPUB's documents are cut in a second process: core.books.epubworker)."""

    texts: list[str]  # each page's text
    htmls: list[str]  # and its HTML
    block_pages: list[int]  # the page (from 0) where each block of the chapter starts
    linking: list[int]  # the pages (from 0) holding links to resolve
    naming: list[int]  # and those holding anchors
    pages: int = -1  # how many pages (when ``texts`` is left empty: ``strings=False``)


def cut_chapter(blocks: Sequence[Block], target: int = 2000, *, strings: bool = True) -> ChapterCut:
    """The pages of one chapter (see ``paginate_blocks``). ``strings=False``: where they
    fall only (their text and HTML left out, ``pages`` set), when each holds whole blocks
    (``whole_pages``) and its text and HTML are made later from them (``page_of``)."""
    texts: list[str] = []
    htmls: list[str] = []
    linking: list[int] = []  # the pages holding links to resolve, and those holding anchors
    naming: list[int] = []  # (found in the parts with markup, not in every page's HTML)
    whole = target * 3 // 2  # a block up to this long is never cut (see _pieces)
    group: list[Block] = []
    groups: list[list[Block]] = [group]
    where: list[int] = []
    size = 0
    last = len(blocks) - 1

    for i, block in enumerate(blocks):
        length = len(block.text)
        if length <= whole:  # the common case of the loop below, without the list
            if size and size + length > target and not (i == last and length <= SMALL_TAIL):
                end = group[-1]
                if end.kind in HEADING_KINDS or (
                    len(group) >= 2
                    and group[-2].kind in HEADING_KINDS
                    and len(end.text) <= SUBTITLE_CHARS
                ):
                    group, size = _next_page(groups, where)
                else:  # (what _next_page does when no heading ends the page)
                    group = []
                    groups.append(group)
                    size = 0
            where.append(len(groups) - 1)
            group.append(block)
            size += length + 2
            continue
        for n, piece in enumerate(_pieces(block, target)):
            if size and size + len(piece.text) > target:
                group, size = _next_page(groups, where)
            if n == 0:
                where.append(len(groups) - 1)
            group.append(piece)
            size += len(piece.text) + 2
    group_page: list[int] = []
    count = 0
    for group in groups:
        group_page.append(count)
        if not group:
            continue
        if strings:
            text, page_html, tagged = page_of(group)
            texts.append(text)
            htmls.append(page_html)
        else:
            tagged = _tagged(group)
        if tagged:
            if any(_LINKING in part for part in tagged):
                linking.append(count)
            if any(_NAMING in part for part in tagged):
                naming.append(count)
        count += 1
    return ChapterCut(
        texts, htmls, [group_page[g] for g in where], linking, naming, -1 if strings else count
    )


def _tagged(group: Sequence[Block]) -> list[str]:
    """``page_of(group)[2]`` without making the page."""
    return [
        b.html if b.kind == "p" and b.html and not b.style else block_html(b)
        for b in group
        if not (b.kind == "p" and b.html and not b.style) or "<" in b.html
    ]


def _plain(b: Block) -> bool:
    """Whether block ``b`` shows as nothing but its text in a paragraph: its HTML is its
    text escaped, with no line end in it (``escape_text`` gives the text itself when there
    is nothing to escape, and the HTML is often that same string: one look)."""
    return (
        b.kind == "p"
        and not b.style
        and bool(b.text)
        and "\n" not in b.text
        and b.html == escape_text(b.text)
    )


def page_of(group: Sequence[Block]) -> tuple[str, str, list[str]]:
    """The text and HTML of a page holding the blocks ``group`` (at least one), and the
    parts of its HTML with markup of their own (where links and anchors may be). A page of
    plain paragraphs (``_plain``) has the HTML "": the text's paragraphs, as the store keeps
    such a page (``core.store.packing.plain_html`` makes the same HTML from the text when
    the page is shown), so it is not made here for nothing (issue 41)."""
    if len(group) == 1:  # (a third of a book's pages: the loop below for one block)
        b = group[0]
        if b.kind == "p" and b.html and not b.style:
            if _plain(b):
                return b.text, "", []
            return b.text, f"<p>{b.html}</p>", [b.html] if "<" in b.html else []
        part = block_html(b)
        return b.text, part, [part]
    if all(map(_plain, group)):
        return "\n\n".join([b.text for b in group]), "", []
    parts: list[str] = []  # the page's HTML: its blocks' one after another, a line each
    tagged: list[str] = []
    for b in group:
        if b.kind == "p" and b.html and not b.style:
            parts += ("<p>", b.html, "</p>\n")
            if "<" in b.html:
                tagged.append(b.html)
        else:
            part = block_html(b)
            parts += (part, "\n")
            tagged.append(part)
    parts[-1] = parts[-1][:-1]  # (no line end after the last)
    return "\n\n".join([b.text for b in group if b.text]), "".join(parts), tagged


def whole_pages(blocks: Sequence[Block], target: int) -> bool:
    """Whether no block of a chapter is cut (``_pieces``): each of its pages then holds
    whole blocks, those ``cut_chapter`` says start on it, in order."""
    whole = target * 3 // 2
    return all(len(b.text) <= whole for b in blocks)


def paginate_blocks(
    chapters: Sequence[Chapter],
    *,
    target: int = 2000,
    keep: frozenset[str] = frozenset(),
    cuts: dict[int, ChapterCut] | None = None,
) -> Pagination:
    """``paginate`` that also records the page of every block. ``cuts``: chapters already
    cut (``cut_chapter`` of the same blocks and target), by index."""
    pages: list[PageContent] = []
    first_pages: list[int] = []
    block_pages: list[list[int]] = []
    linking: list[int] = []  # the pages holding links to resolve, and those holding anchors
    naming: list[int] = []
    for index, chapter in enumerate(chapters):
        done = len(pages)
        first_pages.append(done + 1)
        cut = cuts.get(index) if cuts else None
        if cut is None:
            cut = cut_chapter(chapter.blocks, target)
        number = done
        for text, page_html in zip(cut.texts, cut.htmls, strict=True):
            number += 1
            pages.append(make_page(number, str(number), text, page_html, index))
        if cut.linking:
            linking += [done + page for page in cut.linking]
        if cut.naming:
            naming += [done + page for page in cut.naming]
        block_pages.append([done + 1 + page for page in cut.block_pages])
    if first_pages:
        last = max(len(pages), 1)
        first_pages = [min(p, last) for p in first_pages]
        block_pages = [
            row if not row or max(row) <= last else [min(p, last) for p in row]
            for row in block_pages
        ]
    return Pagination(resolve_note_links(pages, keep, (linking, naming)), first_pages, block_pages)


def printed_labels(pages: list[PageContent], marks: dict[str, str]) -> list[PageContent]:
    """Label each page with the printed page it starts in (``marks``: anchor name → printed
    label, from an EPUB's page-list): the mark at the page's very top, else the last mark
    before it (headings above a mark do not count: a chapter's title is on its first
    printed page); the page holding the first mark is that printed page. Pages before it
    keep their own number."""
    current = ""
    out = []
    for page in pages:
        label = current
        found = [
            (m.start(), m.group(1))
            for m in _ANCHOR_NAME.finditer(page.html or "")
            if m.group(1) in marks
        ]
        if found:
            # only headings above the mark: the chapter starts on that printed page
            before = _TAG.sub("", _HEADING.sub("", (page.html or "")[: found[0][0]]))
            if not before.strip() or not current:
                label = marks[found[0][1]]
            current = marks[found[-1][1]]
        out.append(replace(page, label=label or str(page.number)))
    return out
