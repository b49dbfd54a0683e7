"""Passages for full-text search, cut from pages.

Chunks are about ``target`` characters (never more than 1.5 × target), cut on paragraph and
sentence boundaries, overlap the previous chunk by about ``overlap`` characters so a phrase
that straddles a cut is still found, and never cross a chapter. Each knows its first and last
page, which is what search results and citations show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.books.model import ChunkContent, PageContent, filled
from core.books.pagecuts import split_long_text

NOTE_START = re.compile(r"^\[(\d{1,4}|[*†‡§¶])\] ", re.M)
NOTE_REF = re.compile(r"(?<=\S)\[(\d{1,4}|[*†‡§¶])\]")
NOTE_LINK = re.compile(r'<sup><a href="page:(\d+)">([^<]{1,8})</a></sup>')
NOTE_CHARS = 300
NOTES_HEADING = "Notes to this passage:"
"""A passage that holds note references ends with the text of those notes, under this line,
so that search, the passages given to the model and "what does note 5 say?" have them."""


class _Notes:
    """The book's notes (paragraphs that start with their number, "[5] …") and the links
    from each page's references to the page of their note."""

    def __init__(self, pages: Sequence[PageContent]) -> None:
        self.by_page: dict[tuple[int, str], str] = {}
        self.by_label: dict[str, list[str]] = {}
        self.links: dict[int, dict[str, int]] = {}
        for page in pages:
            if "[" not in page.text:
                continue
            if page.text[0] == "[" or "\n[" in page.text:
                self._collect(page)
            if page.html and "page:" in page.html:
                for target, label in NOTE_LINK.findall(page.html):
                    self.links.setdefault(page.number, {}).setdefault(label, int(target))

    def _collect(self, page: PageContent) -> None:
        for match in NOTE_START.finditer(page.text):
            end = page.text.find("\n\n", match.end())
            text = page.text[match.start() : end if end >= 0 else len(page.text)]
            if len(text) > NOTE_CHARS:
                text = text[:NOTE_CHARS].rsplit(" ", 1)[0] + " …"
            label = match.group(1)
            self.by_page[(page.number, label)] = f"{text} (page {page.number})"
            self.by_label.setdefault(label, []).append(self.by_page[(page.number, label)])

    def for_chunk(self, text: str, start: int, end: int) -> list[str]:
        if not self.by_label or "[" not in text or NOTE_START.search(text):
            return []  # no notes, no references, or the notes themselves
        found: list[str] = []
        for label in dict.fromkeys(NOTE_REF.findall(text)):
            note = None
            for page in range(start, end + 1):
                target = self.links.get(page, {}).get(label)
                if target is not None:
                    note = self.by_page.get((target, label)) or self.by_page.get(
                        (target + 1, label)
                    )
                    break
            if note is None and len(self.by_label.get(label, ())) == 1:
                note = self.by_label[label][0]
            if note is not None:
                found.append(note)
        return found


def _chunk(ordinal: int, start_page: int, end_page: int, chapter: int, text: str) -> ChunkContent:
    """``ChunkContent(...)`` made by ``model.filled`` (a 3 MB text has 3,400 chunks)."""
    fields = {
        "ordinal": ordinal,
        "start_page": start_page,
        "end_page": end_page,
        "chapter": chapter,
        "text": text,
    }
    return filled(ChunkContent, fields)


def _tail(text: str, overlap: int) -> str:
    """The last ``overlap``-ish characters of ``text``, starting at a word boundary."""
    if overlap <= 0 or len(text) <= overlap:
        return ""
    start = text.find(" ", len(text) - overlap)
    return text[start + 1 :] if start >= 0 else ""


def make_chunks(
    pages: Sequence[PageContent], *, target: int = 1200, overlap: int = 150
) -> list[ChunkContent]:
    chunks: list[ChunkContent] = []
    notes = _Notes(pages)
    parts: list[str] = []
    size = 0
    start_page = end_page = 0
    chapter = -1

    carried = 0

    def emit() -> None:
        nonlocal parts, size, carried
        if parts:
            text = "\n\n".join(parts)
            # the words carried over from the chunk before brought their notes there
            # (a book without notes copies no chunk's uncarried words to look for them)
            attached = (
                notes.for_chunk(text[carried:], start_page, end_page) if notes.by_label else []
            )
            if attached:
                text += "\n\n" + NOTES_HEADING + "\n" + "\n".join(attached)
            chunks.append(_chunk(len(chunks), start_page, end_page, chapter, text))
        parts = []
        size = 0
        carried = 0

    # the pages' paragraphs (the long ones cut at sentences) in reading order, each added to
    # the passage being filled (a list of them all, one tuple each, was 4 ms of a 3 MB text)
    for content in pages:
        unit_chapter, page = content.chapter, content.number
        for para in content.text.split("\n\n"):
            para = para.strip()
            if not para:
                continue
            for text in split_long_text(para, target) if len(para) > target else (para,):
                if unit_chapter != chapter:
                    emit()
                    chapter = unit_chapter
                elif size and size + len(text) > target:
                    previous = parts[-1] if parts else ""
                    emit()
                    carry = _tail(previous, overlap)
                    if carry:
                        parts = [carry]
                        size = len(carry)
                        carried = len(carry)
                        # the carried words are on the previous chunk's last page
                        start_page = end_page
                if not parts:
                    start_page = page
                parts.append(text)
                size += len(text) + 2
                end_page = page
    emit()
    return chunks
