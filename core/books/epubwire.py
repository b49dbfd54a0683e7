"""How the EPUB worker (core.books.epubworker) hands one document back: its chapters' blocks
and pages as few objects as possible, since the parse's process unpacks them on the lock
it parses with.

Every string (block texts, block HTML that is not its text, and the pages' text and HTML
when a block was cut; else the parse makes each page from its blocks) goes in one UTF-16
string: decoding UTF-16 is a copy (a tenth of UTF-8's cost on book text, which
pickle would use), and each string is a slice of it. The rest (lengths, kinds, styles, the
pages' places) is a small pickle.
"""

from __future__ import annotations

import pickle
from itertools import accumulate
from typing import Any

from core.books.epubchapters import DocChapters
from core.books.model import Block, make_block
from core.books.pages import ChapterCut, page_of

WIDE = "utf-16-le"


def encode(
    problem: str,
    made: DocChapters | None,
    cuts: list[ChapterCut],
    labels: list[tuple[str, str]],
    targets: list[tuple[str, list[str]]],
) -> tuple[bytes, bytes]:
    """(the pickled rest, the strings in UTF-16) of one document."""
    strings: list[str] = []
    parts: list[tuple[Any, ...]] = []
    for (named, blocks), cut in zip(made.parts if made else (), cuts, strict=True):
        kinds = [b.kind for b in blocks]
        styles = [b.style for b in blocks]
        strings += [b.text for b in blocks]
        other = [i for i, b in enumerate(blocks) if b.html != b.text]
        strings += [blocks[i].html for i in other]
        whole = cut.pages >= 0
        if not whole:  # (else the parse makes them from the blocks: cut_chapter's strings=False)
            strings += cut.texts
            strings += cut.htmls
        parts.append(
            (
                named,
                None if all(k == "p" for k in kinds) else kinds,
                None if not any(styles) else styles,
                other,
                -cut.pages if whole else len(cut.texts),
                cut.block_pages,
                cut.linking,
                cut.naming,
            )
        )
    at = (made.at, made.dropped) if made is not None else None
    lengths = [len(s) for s in strings]
    try:
        wide = "".join(strings).encode(WIDE)
    except UnicodeEncodeError:  # a lone surrogate: the strings go as they are
        meta = pickle.dumps((problem, at, parts, labels, targets, lengths, strings), 5)
        return meta, b""
    meta = pickle.dumps((problem, at, parts, labels, targets, lengths, None), 5)
    return meta, wide


def decode(
    meta: memoryview | bytes, wide: memoryview | bytes
) -> tuple[str, DocChapters | None, list[ChapterCut], list[tuple[str, str]], Any]:
    """What ``encode`` was given."""
    problem, at, parts, labels, targets, lengths, strings = pickle.loads(meta)
    if strings is None:
        whole = str(wide, WIDE)
        ends = list(accumulate(lengths))
        strings = [whole[a:b] for a, b in zip([0, *ends], ends, strict=False)]
    made_parts: list[tuple[str, tuple[Block, ...]]] = []
    cuts: list[ChapterCut] = []
    at_string = 0
    for named, kinds, styles, other, page_count, block_pages, linking, naming in parts:
        count = len(block_pages)
        texts = strings[at_string : at_string + count]
        at_string += count
        htmls = list(texts)
        for i in other:
            htmls[i] = strings[at_string]
            at_string += 1
        blocks = tuple(
            map(
                make_block,
                kinds or ["p"] * count,
                texts,
                htmls,
                styles or [""] * count,
            )
        )
        made_parts.append((named, blocks))
        if page_count >= 0:
            page_texts = strings[at_string : at_string + page_count]
            page_htmls = strings[at_string + page_count : at_string + 2 * page_count]
            at_string += 2 * page_count
        else:  # each page's blocks are those that start on it (core.books.pages.whole_pages)
            groups: list[list[Block]] = [[] for _ in range(-page_count)]
            for block, page in zip(blocks, block_pages, strict=True):
                groups[page].append(block)
            page_texts, page_htmls = [], []
            for group in groups:
                text, page_html, _ = page_of(group)
                page_texts.append(text)
                page_htmls.append(page_html)
        cuts.append(ChapterCut(page_texts, page_htmls, block_pages, linking, naming))
    made = DocChapters(made_parts, at[0], at[1]) if at is not None else None
    return problem, made, cuts, labels, targets
