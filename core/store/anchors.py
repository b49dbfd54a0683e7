"""Text-quote anchors: a place in a book found again by its words, not by its page number.

A ``TextQuote`` is the W3C Web Annotation TextQuoteSelector (``exact``, ``prefix``,
``suffix``, as Hypothesis uses it) plus a TextPositionSelector-like hint: the page and the
offset in that page's stored text where the quote starts and ends. Pages move when a book is
read again (a newer reader, another page size); the words stay. ``BookText.find`` finds a
quote again: every place its exact words occur, the one whose surrounding words match best
and that lies nearest the hint; when the words changed a little, the closest fuzzy match in a
window around the hint (rapidfuzz). A quote found nowhere is ``None``: callers list it for
the reader, never guess.

Text is compared with whitespace collapsed (a selection made in the window has one line
break where the stored page has a blank line between paragraphs). Offsets are always in a
page's stored text (``Library.page_texts``), never in a view's layout.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

CONTEXT = 32  # characters of prefix and suffix kept with a quote
MAX_CANDIDATES = 2000  # occurrences of a very common quote weighed at most
FUZZY_WINDOW = 12_000  # characters either side of the hint searched for a changed quote
FUZZY_CUTOFF = 85.0  # rapidfuzz partial ratio a changed quote must reach
FUZZY_MIN = 12  # shorter quotes are only found word for word
NEAR_WINDOW = 20_000  # characters either side of the hint looked at first
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")  # whitespace that is not a single space


def collapse(text: str) -> str:
    """``text`` with every run of whitespace as one space, trimmed."""
    return " ".join(text.split())


@dataclass(frozen=True)
class TextQuote:
    """Where some words of a book are: ``exact`` (whitespace collapsed), up to ``CONTEXT``
    characters before and after, and the hint: from ``start`` in ``page`` to ``end`` in
    ``end_page`` (stored-text offsets, ``end`` exclusive). ``lost``: not found again after the
    book was last read again (the hint is then where it used to be)."""

    exact: str
    prefix: str = ""
    suffix: str = ""
    page: int = 0
    start: int = 0
    end_page: int = 0
    end: int = 0
    lost: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "page": self.page,
            "start": self.start,
            "end_page": self.end_page or self.page,
            "end": self.end,
        }
        if self.lost:
            out["lost"] = True
        return out

    @classmethod
    def from_json(cls, raw: Any) -> TextQuote | None:
        """A stored quote, or None for anything that is not one."""
        if not isinstance(raw, Mapping) or not isinstance(raw.get("exact"), str):
            return None
        try:
            page = int(raw.get("page", 0))
            return cls(
                exact=raw["exact"],
                prefix=str(raw.get("prefix", "")),
                suffix=str(raw.get("suffix", "")),
                page=page,
                start=int(raw.get("start", 0)),
                end_page=int(raw.get("end_page", page) or page),
                end=int(raw.get("end", 0)),
                lost=bool(raw.get("lost", False)),
            )
        except (TypeError, ValueError):
            return None

    def selector(self) -> dict[str, Any]:
        """The W3C Web Annotation TextQuoteSelector of this quote."""
        return {
            "type": "TextQuoteSelector",
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
        }


@dataclass(frozen=True)
class Found:
    """A quote found again: the quote as the book now has it (pages and offsets updated,
    ``exact`` the book's own words), and whether the words had changed."""

    quote: TextQuote
    fuzzy: bool = False


class _Page:
    """One page's text with whitespace collapsed, and the map back to its stored offsets."""

    __slots__ = ("_text", "lead", "norm", "norm_at", "orig_at", "shrink", "size")

    def __init__(self, stored: str) -> None:
        self._text = stored.strip()
        self.lead = len(stored) - len(stored.lstrip())  # whitespace before the first word
        self.norm = _ODD_SPACE.sub(" ", self._text)
        self.size = len(self.norm)
        self.norm_at: list[int] | None = None  # made when first needed (most pages never are)
        self.orig_at: list[int] = []  # the stored position just after a collapsed run
        self.shrink: list[int] = []  # characters removed up to there

    def _maps(self) -> list[int]:
        if self.norm_at is None:
            norm_at: list[int] = []  # normalised position just after a collapsed run
            removed = 0
            for match in _ODD_SPACE.finditer(self._text):
                s, e = match.span()
                removed += e - s - 1
                self.orig_at.append(e)
                norm_at.append(e - removed)
                self.shrink.append(removed)
            self.norm_at = norm_at
        return self.norm_at

    def to_stored(self, offset: int) -> int:
        k = bisect_right(self._maps(), offset) - 1
        return self.lead + offset + (self.shrink[k] if k >= 0 else 0)

    def to_norm(self, offset: int) -> int:
        norm_at = self._maps()
        offset -= self.lead
        k = bisect_right(self.orig_at, offset) - 1
        norm = offset - (self.shrink[k] if k >= 0 else 0)
        nxt = k + 1  # an offset inside a collapsed run is the run's one space
        if nxt < len(norm_at):
            norm = min(norm, norm_at[nxt] - 1)
        return max(0, min(norm, self.size))


class BookText:
    """A book's text as one string with whitespace collapsed, pages joined by a space, and
    the maps between that string and (page, stored offset)."""

    def __init__(self, pages: Sequence[tuple[int, str]]) -> None:
        self.numbers: list[int] = []
        self.starts: list[int] = []
        self._pages: list[_Page] = []
        parts: list[str] = []
        at = 0
        for number, text in pages:
            page = _Page(text)
            self.numbers.append(number)
            self.starts.append(at)
            self._pages.append(page)
            parts.append(page.norm)
            at += page.size + 1
        self.text = " ".join(parts)

    def __len__(self) -> int:
        return len(self.text)

    # positions ---------------------------------------------------------------------------

    def _index(self, page: int) -> int:
        i = bisect_right(self.numbers, page) - 1
        return max(0, i)

    def position(self, page: int, offset: int) -> int:
        """The place in ``text`` of ``offset`` in stored ``page`` (clamped to the book)."""
        if not self.numbers:
            return 0
        if page > self.numbers[-1]:
            return len(self.text)
        i = self._index(page)
        if self.numbers[i] != page:
            return self.starts[i] if page >= self.numbers[0] else 0
        return self.starts[i] + self._pages[i].to_norm(max(0, offset))

    def locate(self, position: int) -> tuple[int, int]:
        """(page, stored offset) of a place in ``text``."""
        if not self.numbers:
            return (0, 0)
        i = max(0, bisect_right(self.starts, position) - 1)
        within = min(position - self.starts[i], self._pages[i].size)
        return self.numbers[i], self._pages[i].to_stored(within)

    def page_bounds(self, page: int) -> tuple[int, int]:
        """Where ``page`` starts and ends in ``text``."""
        if not self.numbers:
            return 0, 0
        i = self._index(page)
        start = self.starts[i]
        return start, start + self._pages[i].size

    # quotes ------------------------------------------------------------------------------

    def quote_between(self, first: int, last: int) -> TextQuote:
        """The quote of ``text[first:last]`` (spaces at its ends left out)."""
        while first < last and self.text[first] == " ":
            first += 1
        while last > first and self.text[last - 1] == " ":
            last -= 1
        page, start = self.locate(first)
        end_page, end = self.locate(last - 1) if last > first else (page, start)
        if last > first:
            end += 1
        return TextQuote(
            exact=self.text[first:last],
            prefix=self.text[max(0, first - CONTEXT) : first],
            suffix=self.text[last : last + CONTEXT],
            page=page,
            start=start,
            end_page=end_page,
            end=end,
        )

    def quote(self, page: int, start: int, end_page: int, end: int) -> TextQuote:
        """The quote of stored page offsets ``start`` (in ``page``) to ``end`` (in
        ``end_page``)."""
        return self.quote_between(self.position(page, start), self.position(end_page, end))

    def page_start_quote(self, page: int, size: int = 48) -> TextQuote:
        """The first words of ``page``: what a note about a page, or the page on screen, is
        anchored to."""
        first, last = self.page_bounds(page)
        return self.quote_between(first, min(last, first + size))

    def page_end_quote(self, page: int, size: int = 48) -> TextQuote:
        """The last words of ``page``: what "read to here" is anchored to."""
        first, last = self.page_bounds(page)
        return self.quote_between(max(first, last - size), last)

    def quote_of(
        self, words: str, page: int, near: int = -1, *, prefix: str = "", suffix: str = ""
    ) -> TextQuote | None:
        """The quote of ``words`` as they stand on (or run on from) ``page``: the occurrence
        closest to stored offset ``near`` of that page (its first one when ``near`` is -1)
        whose surroundings best match ``prefix`` and ``suffix`` (the words around them where
        a model read them), fuzzy when they differ a little (a model quoting loosely). None
        when not there."""
        exact = collapse(words)
        if not exact or not self.numbers:
            return None
        first, last = self.page_bounds(page)
        expected = first if near < 0 else self.position(page, near)
        hint = TextQuote(exact, prefix=collapse(prefix), suffix=collapse(suffix), page=page)
        found = self._exact(hint, expected, first, last + len(exact))
        if found is None:
            found = self._exact(hint, expected, max(0, first - len(exact)), last + len(exact))
        if found is not None:
            return self.quote_between(found, found + len(exact))
        span = self._fuzzy(exact, expected, window=max(last - first, 2000))
        return None if span is None else self.quote_between(*span)

    # finding again -----------------------------------------------------------------------

    def find(self, quote: TextQuote, expected: int | None = None) -> Found | None:
        """``quote`` found again in this text: its exact words where the context matches
        best nearest ``expected`` (a place in ``text``; by default the quote's own page and
        offset), else a close fuzzy match near there. None when it is not in the book."""
        exact = collapse(quote.exact)
        if not exact:
            return None
        if expected is None:
            expected = self.position(quote.page, quote.start)
        # near its old place first (one short scan), then anywhere in the book
        near = max(NEAR_WINDOW, len(self.text) // 50)
        at = self._exact(quote, expected, max(0, expected - near), expected + near + len(exact))
        if at is None:
            at = self._exact(quote, expected, 0, len(self.text))
        if at is not None:
            return Found(self.quote_between(at, at + len(exact)))
        span = self._fuzzy(exact, expected, window=FUZZY_WINDOW)
        if span is None:
            return None
        return Found(self.quote_between(*span), fuzzy=True)

    def _exact(self, quote: TextQuote, expected: int, lo: int, hi: int) -> int | None:
        """The best place of ``quote.exact`` word for word within ``text[lo:hi]``."""
        from rapidfuzz.fuzz import ratio

        exact = collapse(quote.exact)
        text = self.text
        best: int | None = None
        best_score = -1e9
        at = text.find(exact, lo, hi)
        seen = 0
        scale = max(1, len(text))
        while at >= 0 and seen < MAX_CANDIDATES:
            score = -100.0 * min(1.0, 20.0 * abs(at - expected) / scale)
            if quote.prefix:
                before = text[max(0, at - len(quote.prefix)) : at]
                score += ratio(quote.prefix, before)
            if quote.suffix:
                after = text[at + len(exact) : at + len(exact) + len(quote.suffix)]
                score += ratio(quote.suffix, after)
            if score > best_score:
                best, best_score = at, score
            seen += 1
            at = text.find(exact, at + 1, hi)
        return best

    def _words(self, first: int, last: int, exact: str) -> tuple[int, int]:
        """A fuzzy match's ends moved off punctuation the quote does not start or end with."""
        text = self.text
        while first < last and not text[first].isalnum() and exact[0].isalnum():
            first += 1
        while last > first and not text[last - 1].isalnum() and exact[-1].isalnum():
            last -= 1
        return first, last

    def _fuzzy(self, exact: str, expected: int, *, window: int) -> tuple[int, int] | None:
        """Where words close to ``exact`` stand within ``window`` characters of ``expected``."""
        if len(exact) < FUZZY_MIN:
            return None
        from rapidfuzz.fuzz import partial_ratio_alignment

        lo = max(0, expected - window)
        hi = min(len(self.text), expected + window + len(exact))
        if len(exact) <= 300:
            hit = partial_ratio_alignment(exact, self.text[lo:hi], score_cutoff=FUZZY_CUTOFF)
            if hit is None:
                return None
            return self._words(lo + hit.dest_start, lo + hit.dest_end, exact)
        # a long passage: its first and last words found, in order, about as far apart
        head = self._fuzzy(exact[:150], expected, window=window)
        if head is None:
            return None
        tail = self._fuzzy(exact[-150:], head[0] + len(exact) - 150, window=len(exact) // 4)
        if tail is None or tail[1] <= head[0]:
            return None
        if not 0.75 <= (tail[1] - head[0]) / len(exact) <= 1.33:
            return None
        return head[0], tail[1]


CONTEXT_AGREES = 80.0  # rapidfuzz ratio of the words before or after a quote that moved
UNIQUE_WORDS = 12  # a quote this long found once in the new text needs no context


def moved(old: BookText, new: BookText, quote: TextQuote) -> Found | None:
    """``quote``, made against ``old``, found in ``new`` (the same book read again): the hint
    is where its old place falls in the new text, in proportion. Never a guess (issue 46
    item 5): the place found must have the quote's surroundings (its prefix or suffix agrees),
    unless the quote is long and found only once; else None (listed as lost)."""
    before = old.position(quote.page, quote.start)
    expected = int(before * len(new) / max(1, len(old)))
    found = new.find(replace(quote, lost=False), expected)
    if found is None or _context_agrees(quote, found.quote):
        return found
    exact = collapse(quote.exact)
    if not found.fuzzy and len(exact.split()) >= UNIQUE_WORDS:
        first = new.text.find(exact)
        if first >= 0 and new.text.find(exact, first + 1) < 0:
            return found  # long, and nowhere else: its own words place it
    return None


def _context_agrees(was: TextQuote, now: TextQuote) -> bool:
    """Whether the words around a quote's new place are those around its old place (on at
    least one side); a quote stored without any agrees (nothing to compare)."""
    from rapidfuzz.fuzz import ratio

    before, after = collapse(was.prefix), collapse(was.suffix)
    if not before and not after:
        return True
    scores = [0.0]
    new_before, new_after = collapse(now.prefix), collapse(now.suffix)
    n = min(len(before), len(new_before))
    if n:  # the words just before: the ends of the prefixes
        scores.append(ratio(before[-n:], new_before[-n:]))
    n = min(len(after), len(new_after))
    if n:  # the words just after: the starts of the suffixes
        scores.append(ratio(after[:n], new_after[:n]))
    return max(scores) >= CONTEXT_AGREES


def stored_to_view(stored: str, offset: int) -> int:
    """The text view's offset of a stored-text offset: the view has one paragraph break
    where the stored text has a blank line."""
    return offset - stored[:offset].count("\n\n")


def view_to_stored(stored: str, offset: int) -> int:
    """The stored-text offset of a text view's offset (see ``stored_to_view``)."""
    at = 0
    view = 0
    while True:
        nxt = stored.find("\n\n", at)
        if nxt < 0 or view + (nxt - at) >= offset:
            return at + (offset - view)
        view += nxt - at + 1
        at = nxt + 2
