"""Migration v15 (``_text_quote_anchors``): quotes for an older library's highlights,
notes about a page, and citations, found in the text they point at then.

Frozen: a copy of the anchoring of the time (``core.store.anchors``' ``BookText``, the quote of a
highlight, a citation's words found on its pages), so a later change to how Margin anchors
never changes what this step wrote. Page text is read with the frozen ``pages_v8``.
"""

from __future__ import annotations

import json
import re
import zlib
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.errors import StorageError
from core.store.frozen.pages_v8 import page_text

CONTEXT = 32  # characters of prefix and suffix kept with a quote
MAX_CANDIDATES = 2000  # occurrences of a very common quote weighed at most
FUZZY_CUTOFF = 85.0  # rapidfuzz partial ratio a changed quote must reach
FUZZY_MIN = 12  # shorter quotes are only found word for word
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")  # whitespace that is not a single space


def collapse(text: str) -> str:
    """``text`` with every run of whitespace as one space, trimmed."""
    return " ".join(text.split())


@dataclass(frozen=True)
class _Quote:
    """``core.store.anchors.TextQuote`` as it was: the words, their context and where they are."""

    exact: str
    prefix: str = ""
    suffix: str = ""
    page: int = 0
    start: int = 0
    end_page: int = 0
    end: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "page": self.page,
            "start": self.start,
            "end_page": self.end_page or self.page,
            "end": self.end,
        }


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


class _BookText:
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

    def quote_between(self, first: int, last: int) -> _Quote:
        """The quote of ``text[first:last]`` (spaces at its ends left out)."""
        while first < last and self.text[first] == " ":
            first += 1
        while last > first and self.text[last - 1] == " ":
            last -= 1
        page, start = self.locate(first)
        end_page, end = self.locate(last - 1) if last > first else (page, start)
        if last > first:
            end += 1
        return _Quote(
            exact=self.text[first:last],
            prefix=self.text[max(0, first - CONTEXT) : first],
            suffix=self.text[last : last + CONTEXT],
            page=page,
            start=start,
            end_page=end_page,
            end=end,
        )

    def quote(self, page: int, start: int, end_page: int, end: int) -> _Quote:
        """The quote of stored page offsets ``start`` (in ``page``) to ``end`` (in
        ``end_page``)."""
        return self.quote_between(self.position(page, start), self.position(end_page, end))

    def page_start_quote(self, page: int, size: int = 48) -> _Quote:
        """The first words of ``page``: what a note about a page, or the page on screen, is
        anchored to."""
        first, last = self.page_bounds(page)
        return self.quote_between(first, min(last, first + size))

    def quote_of(
        self, words: str, page: int, near: int = -1, *, prefix: str = "", suffix: str = ""
    ) -> _Quote | None:
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
        hint = _Quote(exact, prefix=collapse(prefix), suffix=collapse(suffix), page=page)
        found = self._exact(hint, expected, first, last + len(exact))
        if found is None:
            found = self._exact(hint, expected, max(0, first - len(exact)), last + len(exact))
        if found is not None:
            return self.quote_between(found, found + len(exact))
        span = self._fuzzy(exact, expected, window=max(last - first, 2000))
        return None if span is None else self.quote_between(*span)

    def _exact(self, quote: _Quote, expected: int, lo: int, hi: int) -> int | None:
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


def _loads(raw: Any) -> Any:
    if raw is None or isinstance(raw, (dict, list)):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def view_span(anchor: Any) -> tuple[int, int, int, int] | None:
    """(page, offset, end page, end offset) of a text view's highlight anchor."""
    if not isinstance(anchor, Mapping):
        return None
    try:
        s, e = anchor["start"], anchor["end"]
        return int(s["page"]), int(s["offset"]), int(e["page"]), int(e["offset"])
    except (KeyError, TypeError, ValueError):
        return None


def _stored_near(anchor: Any) -> int:
    """A PDF highlight anchor's ``stored_start`` (its words' offset in the stored page, which
    the selection's boxes say: the occurrence selected, not the page's first); -1 if none."""
    try:
        return int(anchor["stored_start"]) if isinstance(anchor, Mapping) else -1
    except (KeyError, TypeError, ValueError):
        return -1


def highlight_quote(
    book: _BookText, texts: Mapping[int, str], page: int, text: str, anchor: Any
) -> _Quote:
    """The quote of a highlight: its view offsets when they hold its words, else its words
    on its page (a PDF highlight, an old one), else its words alone."""
    words = collapse(text)
    span = view_span(anchor)
    if span is not None:
        p1, o1, p2, o2 = span
        start = view_to_stored(texts.get(p1, ""), o1)
        end = view_to_stored(texts.get(p2, ""), o2)
        quote = book.quote(p1, start, p2, end)
        if quote.exact == words:
            return quote
        near = start  # the offsets are near, not on, its words (an image, a note mark)
    else:  # a PDF selection's boxes: where its words start in the stored page, when known
        near = _stored_near(anchor)
    found = book.quote_of(words, page, near) if words else None
    return found or _Quote(words, page=page, end_page=page)


def _page_texts(db: pw.SqliteDatabase, book_id: int) -> list[tuple[int, str]]:
    rows = db.execute_sql(
        "SELECT number, text FROM page WHERE book_id = ? ORDER BY number", (book_id,)
    ).fetchall()
    try:
        return [(int(n), page_text(t)) for n, t in rows]
    except (ValueError, zlib.error) as exc:
        raise StorageError(
            "corrupt",
            f"The library database is damaged: a page of book {book_id} cannot be read.",
            hint=f"Repair it with 'margin repair {book_id}' (or Book › Repair search index); "
            "notes, highlights and conversations are kept.",
        ) from exc


def _resolve(db: pw.SqliteDatabase, cite: dict[str, Any]) -> dict[str, Any]:
    """A stored citation (JSON) with the book's own words for its quote and where they start
    (``exact``, ``start``), pages moved to where they stand; unchanged when not found."""
    book_id, first_page = int(cite["book_id"]), int(cite["first_page"])
    last_page, quoted = int(cite["last_page"]), str(cite.get("quoted_text", ""))
    out: dict[str, Any] = {"book_id": book_id, "first_page": first_page, "last_page": last_page}
    out["quoted_text"] = quoted
    exact = str(cite.get("exact", ""))
    if exact:
        return out | {"exact": exact, "start": int(cite.get("start", -1))}
    if not quoted.strip():
        return out
    rows = db.execute_sql(
        "SELECT number, text FROM page WHERE book_id = ? AND number BETWEEN ? AND ? "
        "ORDER BY number",
        (book_id, max(1, first_page - 1), max(first_page, last_page) + 1),
    ).fetchall()
    if not rows:
        return out
    book = _BookText([(int(n), page_text(t)) for n, t in rows])
    quote = book.quote_of(quoted, first_page)
    if quote is None or not first_page - 1 <= quote.page <= last_page + 1:
        return out
    first = quote.page
    last = max(quote.end_page, first + max(0, last_page - first_page))
    out |= {"first_page": first, "last_page": last}
    return out | ({"exact": quote.exact, "start": quote.start} if quote.exact else {})


def _resolve_all(db: pw.SqliteDatabase, cites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each citation resolved; all as they were if finding their words fails (an answer
    keeps the citations the model gave)."""
    try:
        return [_resolve(db, c) for c in cites]
    except Exception:
        return [_as_stored(c) for c in cites]


def _as_stored(cite: dict[str, Any]) -> dict[str, Any]:
    out = {
        "book_id": int(cite["book_id"]),
        "first_page": int(cite["first_page"]),
        "last_page": int(cite["last_page"]),
        "quoted_text": str(cite.get("quoted_text", "")),
    }
    exact = str(cite.get("exact", ""))
    return out | ({"exact": exact, "start": int(cite.get("start", -1))} if exact else {})


def backfill(db: pw.SqliteDatabase) -> None:
    """Quotes for an older library's highlights, notes about a page, and citations (from the
    text they point at now). Rows that have one are left alone."""
    books = {
        int(r[0])
        for r in db.execute_sql(
            "SELECT book_id FROM highlight WHERE quote IS NULL UNION "
            "SELECT book_id FROM note WHERE quote IS NULL AND page IS NOT NULL"
        ).fetchall()
    }
    for book_id in sorted(books):
        pages = _page_texts(db, book_id)
        book, texts = _BookText(pages), dict(pages)
        if not texts:
            continue
        rows = db.execute_sql(
            "SELECT id, page, text, anchor FROM highlight WHERE book_id = ? AND quote IS NULL",
            (book_id,),
        ).fetchall()
        db.cursor().executemany(
            "UPDATE highlight SET quote = ? WHERE id = ?",
            [
                (_dumps(highlight_quote(book, texts, p, t, _loads(a)).to_json()), i)
                for i, p, t, a in rows
            ],
        )
        rows = db.execute_sql(
            "SELECT id, page FROM note WHERE book_id = ? AND quote IS NULL AND page IS NOT NULL",
            (book_id,),
        ).fetchall()
        db.cursor().executemany(
            "UPDATE note SET quote = ? WHERE id = ?",
            [(_dumps(book.page_start_quote(p).to_json()), i) for i, p in rows if p in texts],
        )
    updates = []
    for mid, raw in db.execute_sql(
        "SELECT id, citations FROM message WHERE citations IS NOT NULL AND citations != '[]'"
    ).fetchall():
        cites = _loads(raw)
        if not isinstance(cites, list) or all(
            not isinstance(c, dict) or "exact" in c for c in cites
        ):
            continue
        try:
            stored = [_as_stored(c) for c in cites]
        except (KeyError, TypeError, ValueError):
            continue
        updates.append((_dumps(_resolve_all(db, stored)), mid))
    db.cursor().executemany("UPDATE message SET citations = ? WHERE id = ?", updates)
