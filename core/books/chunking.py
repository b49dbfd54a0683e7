"""Passages for full-text search, cut from pages.

Chunks are about ``target`` characters (never more than 1.5 × target), cut on paragraph and
sentence boundaries, overlap the previous chunk by about ``overlap`` characters so a phrase
that straddles a cut is still found, and never cross a chapter. Each knows its first and last
page, which is what search results and citations show.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.books.model import ChunkContent, PageContent
from core.books.pages import split_long_text


def _units(pages: Sequence[PageContent], target: int) -> list[tuple[int, int, str]]:
    """(chapter, page, paragraph-or-sentence-run) in reading order."""
    units: list[tuple[int, int, str]] = []
    for page in pages:
        for para in page.text.split("\n\n"):
            para = para.strip()
            if not para:
                continue
            if len(para) > target:
                units.extend((page.chapter, page.number, p) for p in split_long_text(para, target))
            else:
                units.append((page.chapter, page.number, para))
    return units


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
    parts: list[str] = []
    size = 0
    start_page = end_page = 0
    chapter = -1

    def emit() -> None:
        nonlocal parts, size
        if parts:
            chunks.append(
                ChunkContent(
                    ordinal=len(chunks),
                    start_page=start_page,
                    end_page=end_page,
                    chapter=chapter,
                    text="\n\n".join(parts),
                )
            )
        parts = []
        size = 0

    for unit_chapter, page, text in _units(pages, target):
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
                start_page = end_page  # the carried words are on the previous chunk's last page
        if not parts:
            start_page = page
        parts.append(text)
        size += len(text) + 2
        end_page = page
    emit()
    return chunks
