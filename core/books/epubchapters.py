"""What one EPUB document adds to the book's chapters, as a pure function of its blocks.

The EPUB parser (core.books.epub) runs it on each spine document in turn; the second
process that parses a big book's last documents (core.books.epubworker) runs the same
function, so its chapters are cut the same way. Chapter numbers here count from the
document's first chapter; the parser adds the chapters before it.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import NamedTuple

from core.books.epubtoc import _Entry
from core.books.limits import too_large
from core.books.model import Block
from core.books.titles import TITLE_CHARS


def _is_heading(block: Block) -> bool:
    return block.kind[0] == "h" and block.kind[1:].isdigit()


def _has_content(block: Block) -> bool:
    """Text, or an image (an illustration or a frontispiece is part of the book)."""
    return bool(block.text) or block.kind == "img"


def _is_cover(doc: str, blocks: list[Block]) -> bool:
    """An image-only document that is the book's cover (by its name or its image's)."""
    if any(b.text and b.kind != "img" and not _only_pictures(b.text) for b in blocks):
        return False
    return "cover" in doc.lower() or all("cover" in b.html.lower() for b in blocks)


def _only_pictures(text: str) -> bool:
    """Text that is only the alt text of images (a cover whose file is missing)."""
    return not re.sub(r"\[Illustration: [^\]]*\]", "", text).strip()


def _is_boilerplate(title: str, block: Block | None) -> bool:
    """A contents "title" that is really a paragraph: far longer than any heading, and the
    element it points at is not a heading."""
    if len(title) <= TITLE_CHARS:
        return False
    return block is None or not _is_heading(block)


def finish_blocks(path: Path, doc: str, blocks: list[Block], max_paragraph_chars: int) -> None:
    """Where a link to the document itself lands (``margin:DOC#``: an anchor before its
    first block); a paragraph longer than the limit refuses the book."""
    if blocks:
        lead = blocks[0]
        blocks[0] = Block(
            lead.kind, lead.text, f'<a name="{escape(doc)}#"></a>{lead.html}', lead.style
        )
    for block in blocks:
        if len(block.text) > max_paragraph_chars:
            raise too_large(
                path, f"one paragraph is longer than {max_paragraph_chars:,} characters"
            )


class DocChapters(NamedTuple):
    """A document's chapters: (its heading or the document's title, "" for none; blocks)."""

    parts: list[tuple[str, tuple[Block, ...]]]
    at: list[tuple[str, int, int]]  # (fragment, chapter from the document's first, block)
    dropped: list[int]  # contents entries that are boilerplate, not headings


def doc_chapters(
    doc: str,
    title: str,
    blocks: list[Block],
    anchors: dict[str, int],
    numbers: list[int],
    toc_entries: list[_Entry],
) -> DocChapters | None:
    """The chapters document ``doc`` makes (None: it adds nothing to read). ``numbers``:
    the contents entries pointing into it (indexes in ``toc_entries``)."""
    if not any(_has_content(b) for b in blocks):
        return None  # empty documents add nothing to read (an image-only one is a page)
    if _is_cover(doc, blocks) and not numbers:
        return None  # the cover is the book's picture in the library, not a page to read
    # Contents entries that point inside this document start chapters of their own, so
    # each entry's page is the page its heading is on. A long entry pointing at a
    # paragraph (Gutenberg's boilerplate first entry) is not a heading: it is dropped.
    starts: dict[int, list[str]] = {}
    dropped: list[int] = []
    for number in numbers:
        entry = toc_entries[number]
        index = anchors.get(entry.fragment) if entry.fragment else None
        at = index if index is not None else 0
        if _is_boilerplate(entry.title, blocks[at] if at < len(blocks) else None):
            dropped.append(number)
        elif index is not None:
            starts.setdefault(index, []).append(entry.fragment)
    cuts = sorted({0, *starts})
    segments = [
        (cut, blocks[cut : cuts[n + 1] if n + 1 < len(cuts) else len(blocks)])
        for n, cut in enumerate(cuts)
    ]
    # A part that is only headings (a story title right before its "I.") or has no
    # text shares the next part's chapter and page, so no page is a lone heading.
    parts: list[tuple[str, tuple[Block, ...]]] = []
    placed: list[tuple[str, int, int]] = []
    pending: list[tuple[str, int]] = []  # (fragment, block offset in the chapter)
    carried: list[Block] = []
    for n, (cut, part) in enumerate(segments):
        pending.extend((fragment, len(carried)) for fragment in starts.get(cut, []))
        part = carried + part
        last_part = n + 1 == len(segments)
        if not last_part and all(_is_heading(b) or not _has_content(b) for b in part):
            carried = part
            continue
        if not any(_has_content(b) for b in part):
            carried = part  # only at the end of the document: joins the chapter before
            break
        carried = []
        heading = next((b.text for b in part if b.kind in ("h1", "h2", "h3")), "")
        placed.extend((fragment, len(parts), offset) for fragment, offset in pending)
        pending = []
        parts.append((heading or title, tuple(part)))
    if carried and parts:
        named, last = parts[-1]
        parts[-1] = (named, last + tuple(carried))
        placed.extend(
            (fragment, len(parts) - 1, len(last) + offset) for fragment, offset in pending
        )
    return DocChapters(parts, placed, dropped)
