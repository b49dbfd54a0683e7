"""Where anchored words stand in a PDF page's own text (QtPdf's), so they are marked exactly.

A quote's ``exact`` and ``start`` are in the page's *stored* text (pdfium's text cleaned by
``clean_page_text``: line ends, control characters and spaces tidied); QtPdf hands out the
same page's raw text and selects by index into it. ``find_words`` compares both with
whitespace collapsed and control characters left out, and picks the occurrence the anchor
names when the words stand more than once on the page: the same one counted in the stored
text (the n-th of n), else the one nearest the anchor's place in proportion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.store.anchors import BookText, collapse

# what clean_page_text drops (control characters, pdfium's end-of-line hyphen marker \x02)
# plus the soft hyphen: never part of the words compared
_SKIP = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u00ad\ufffe\uffff]")
HEAD_WORDS = 8  # a quote not found word for word is marked by its first words, as before


def _collapsed(raw: str) -> tuple[str, list[int]]:
    """``raw`` with whitespace collapsed and skipped characters left out, and for each of its
    characters the index in ``raw`` it came from."""
    out: list[str] = []
    at: list[int] = []
    space = False
    for i, ch in enumerate(raw):
        if _SKIP.match(ch):
            continue
        if ch.isspace():
            space = bool(out)
            continue
        if space:
            out.append(" ")
            at.append(i - 1)
            space = False
        out.append(ch)
        at.append(i)
    return "".join(out), at


def _occurrences(text: str, words: str) -> list[int]:
    found = []
    at = text.find(words)
    while at >= 0:
        found.append(at)
        at = text.find(words, at + 1)
    return found


def _pick(found: Sequence[int], size: int, stored: str, words: str, near: int) -> int:
    """The occurrence in ``found`` (in a text of ``size`` characters) that the anchor at
    stored offset ``near`` of the page ``stored`` names."""
    if len(found) == 1 or near < 0 or not stored:
        return found[0]
    book = BookText([(1, stored)])
    place = book.position(1, near)
    in_stored = _occurrences(book.text, words)
    if len(in_stored) == len(found):  # the same words the same number of times: the n-th
        nth = min(range(len(in_stored)), key=lambda k: abs(in_stored[k] - place))
        return found[nth]
    expected = place * size / max(1, len(book.text))
    return min(found, key=lambda at: abs(at - expected))


def find_words(raw: str, exact: str, stored: str = "", near: int = -1) -> tuple[int, int] | None:
    """(index, length) in QtPdf's page text ``raw`` of the words ``exact`` — the occurrence
    that starts at stored offset ``near`` of the page's stored text ``stored`` when they
    stand there more than once. Words that run on to the next page are found by the part on
    this one (when it ends the page); words not there word for word (a model quoting loosely)
    by their first words, the first occurrence, as a viewer's search would. None when not
    on the page."""
    words = collapse(_SKIP.sub("", exact))
    if not words:
        return None
    text, at = _collapsed(raw)
    found = _occurrences(text, words)
    length = len(words)
    if not found:
        head = _running_on(text, words)
        if head:
            found, length = [len(text) - head], head
    if not found:  # loosely quoted: the first words, case aside
        first = " ".join(words.split()[:HEAD_WORDS])
        found, length = _occurrences(text.lower(), first.lower())[:1], len(first)
    if not found:
        return None
    start = _pick(found, len(text), stored, words, near) if length == len(words) else found[0]
    first_raw, last_raw = at[start], at[start + length - 1]
    return first_raw, last_raw - first_raw + 1


def _running_on(text: str, words: str, least: int = 3) -> int:
    """How many characters of ``words`` (whole words, at least ``least`` of them) end
    ``text``: a passage that goes on over the page; 0 when none."""
    parts = words.split(" ")
    for n in range(len(parts) - 1, least - 1, -1):
        head = " ".join(parts[:n])
        if text.endswith(head):
            return len(head)
    return 0


def stored_start(raw: str, raw_index: int, exact: str, stored: str) -> int:
    """Where the words ``exact``, selected from index ``raw_index`` of QtPdf's page text
    ``raw``, start in the page's stored text ``stored`` (the same occurrence when they stand
    there more than once); -1 when they are not there."""
    words = collapse(_SKIP.sub("", exact))
    if not words or not stored:
        return -1
    text, at = _collapsed(raw)
    found = _occurrences(text, words)
    book = BookText([(1, stored)])
    in_stored = _occurrences(book.text, words)
    if not found or not in_stored:
        return -1
    nth = min(range(len(found)), key=lambda k: abs(at[found[k]] - raw_index))
    if len(found) == len(in_stored):
        place = in_stored[nth]
    else:
        expected = found[nth] * len(book.text) / max(1, len(text))
        place = min(in_stored, key=lambda p: abs(p - expected))
    return book.locate(place)[1]
