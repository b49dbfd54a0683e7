"""Passages that are not the book's text: contents, lists of illustrations, title pages,
copyright and licence pages (Project Gutenberg's header and licence, Standard Ebooks'
colophon). They never rank as answers to a question; they stay readable and the reader's
own Find still finds them (it scans pages, not search passages)."""

from __future__ import annotations

import re

# plain substrings of the lower-cased text: a search checks every passage it shows
_BOILERPLATE = (
    "gutenberg",
    "standard ebooks",
    "creative commons",
    "cc0",
    "uncopyright",
    "all rights reserved",
    "isbn",
)
_LIST_TITLE = re.compile(
    r"^(table of )?contents$|^(list of )?illustrations$|^list of (plates|figures|maps)$",
    re.IGNORECASE,
)
_HEADING = re.compile(
    r"^(chapter|part|book|section|act|scene|letter|volume|stave|canto|appendix|preface|"
    r"introduction|epilogue|prologue)\b|^[ivxlc]+\.?(\s|$)|^\d+\.?(\s|$)|\s·\s|\s\d+$",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?…][\"”’')\]]*$")


def is_front_matter(text: str) -> bool:
    """Whether a search passage is contents, a list of illustrations, a title page or a
    copyright/licence page rather than the book's prose."""
    lowered = text.lower()
    if any(words in lowered for words in _BOILERPLATE):
        return True
    lines = [line for line in (raw.strip() for raw in text.splitlines()) if line]
    if not lines:
        return True
    # (each test only when the number of lines lets it tell: a search checks every passage
    # it shows, most of them a few paragraphs of prose)
    if len(lines) >= 4 and any(_LIST_TITLE.match(line.strip(" .:")) for line in lines):
        return True
    if len(lines) >= 5:
        headings = sum(1 for line in lines if len(line) < 90 and _HEADING.search(line))
        if headings >= 0.6 * len(lines):
            return True
    # a title page: a few short lines, none of them a sentence
    short = all(len(line) < 80 and not _SENTENCE_END.search(line) for line in lines)
    return short and len(text.split()) <= 40
