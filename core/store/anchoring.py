"""Everything that points into a book, kept on its words (``core.store.anchors``).

Highlights, notes, threads and citations store a ``TextQuote``. When a book is read again
(``BookContent.replace_content``) each one is found again in the new text and its pages are
updated; so are the page on screen and ``read_to`` (by the last words of the page read to).
What cannot be found keeps its old page and is marked lost (``lost_anchors`` lists it for
the reader). ``resolve_citations`` turns a model's quoted words into the book's own (an answer's save).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import peewee as pw

from core.domain.messages import CitationRef, Passage
from core.store.anchoring_history import PageMover, move_history
from core.store.anchors import BookText, Found, TextQuote, collapse, moved, stored_to_view
from core.store.anchors import view_to_stored as _view_to_stored

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LostAnchor:
    """Something whose words were not found when its book was read again."""

    kind: str  # highlight | note | thread | citation
    id: int  # its row (a citation: its answer's message)
    page: int  # where it was
    text: str  # its words


@dataclass
class Reanchored:
    """What re-reading a book did to what points into it."""

    found: int = 0
    fuzzy: int = 0  # found, but the words had changed a little
    lost: list[LostAnchor] = field(default_factory=list)
    page: int = 1
    read_to: int = 1
    seconds: float = 0.0


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
    book: BookText, texts: Mapping[int, str], page: int, text: str, anchor: Any
) -> TextQuote:
    """The quote of a highlight: its view offsets when they hold its words, else its words
    on its page (a PDF highlight, an old one), else its words alone."""
    words = collapse(text)
    span = view_span(anchor)
    if span is not None:
        p1, o1, p2, o2 = span
        start = _view_to_stored(texts.get(p1, ""), o1)
        end = _view_to_stored(texts.get(p2, ""), o2)
        quote = book.quote(p1, start, p2, end)
        if quote.exact == words:
            return quote
        near = start  # the offsets are near, not on, its words (an image, a note mark)
    else:  # a PDF selection's boxes: where its words start in the stored page, when known
        near = _stored_near(anchor)
    found = book.quote_of(words, page, near) if words else None
    return found or TextQuote(words, page=page, end_page=page)


def view_anchor(texts: Mapping[int, str], quote: TextQuote) -> dict[str, Any]:
    """A text view's highlight anchor of ``quote`` (the view counts one paragraph break
    where the stored text has a blank line)."""
    return {
        "start": {"page": quote.page, "offset": stored_to_view(texts[quote.page], quote.start)},
        "end": {
            "page": quote.end_page,
            "offset": stored_to_view(texts[quote.end_page], quote.end),
        },
    }


# re-reading a book -------------------------------------------------------------------------


def reanchor(
    db: pw.SqliteDatabase,
    book_id: int,
    old_pages: Sequence[tuple[int, str]],
    new_pages: Sequence[tuple[int, str]],
    *,
    page: int,
    read_to: int,
) -> Reanchored:
    """Find everything that points into the book again in its new pages (inside the
    transaction that replaced them); returns the new page and ``read_to`` and what was lost."""
    began = time.perf_counter()
    old, new = BookText(old_pages), BookText(new_pages)
    old_texts, new_texts = dict(old_pages), dict(new_pages)
    last = max(new_texts) if new_texts else 1
    out = Reanchored()

    def follow(quote: TextQuote, kind: str, row_id: int) -> Found | None:
        found = moved(old, new, quote) if quote.exact else None
        if found is None:
            out.lost.append(LostAnchor(kind, row_id, quote.page, quote.exact))
        else:
            out.found += 1
            out.fuzzy += found.fuzzy
        return found

    def lost(quote: TextQuote) -> TextQuote:
        return replace(quote, lost=True, page=min(quote.page, last), end_page=min(quote.page, last))

    updates: list[tuple[int, str | None, str | None, int]] = []
    for hid, hpage, text, anchor, raw in db.execute_sql(
        "SELECT id, page, text, anchor, quote FROM highlight WHERE book_id = ?", (book_id,)
    ).fetchall():
        anchor = _loads(anchor)
        quote = TextQuote.from_json(_loads(raw)) or highlight_quote(
            old, old_texts, hpage, text, anchor
        )
        found = follow(quote, "highlight", hid)
        if found is None:
            updates.append((min(hpage, last), _dumps(anchor), _dumps(lost(quote).to_json()), hid))
            continue
        q = found.quote
        if view_span(anchor) is not None:
            anchor = view_anchor(new_texts, q)
        updates.append((q.page, _dumps(anchor), _dumps(q.to_json()), hid))
    db.cursor().executemany(
        "UPDATE highlight SET page = ?, anchor = ?, quote = ? WHERE id = ?", updates
    )

    notes: list[tuple[int, str, int]] = []
    for nid, npage, raw in db.execute_sql(
        "SELECT id, page, quote FROM note WHERE book_id = ? AND page IS NOT NULL", (book_id,)
    ).fetchall():
        quote = TextQuote.from_json(_loads(raw)) or old.page_start_quote(npage)
        found = follow(quote, "note", nid)
        q = lost(quote) if found is None else found.quote
        notes.append((q.page, _dumps(q.to_json()) or "", nid))
    db.cursor().executemany("UPDATE note SET page = ?, quote = ? WHERE id = ?", notes)

    threads: list[tuple[str, int]] = []
    for cid, raw in db.execute_sql(
        "SELECT id, quote FROM conversation WHERE book_id = ? AND quote IS NOT NULL", (book_id,)
    ).fetchall():
        stored = TextQuote.from_json(_loads(raw))
        if stored is None:
            continue
        found = follow(stored, "thread", cid)
        q = lost(stored) if found is None else found.quote
        threads.append((_dumps(q.to_json()) or "", cid))
    db.cursor().executemany("UPDATE conversation SET quote = ? WHERE id = ?", threads)

    messages: list[tuple[str, int]] = []
    cited: dict[int, dict[tuple[int, int], tuple[int, int]]] = {}
    quoted: dict[int, dict[str, tuple[int, int]]] = {}
    for mid, raw in db.execute_sql(
        "SELECT m.id, m.citations FROM message m JOIN conversation c ON c.id = m.conversation_id"
        " WHERE c.book_id = ? AND m.citations IS NOT NULL AND m.citations != '[]'",
        (book_id,),
    ).fetchall():
        cites = _loads(raw)
        if not isinstance(cites, list):
            continue
        spans, quotes = cited.setdefault(int(mid), {}), quoted.setdefault(int(mid), {})
        for cite in cites:
            if not isinstance(cite, dict) or int(cite.get("book_id", 0)) != book_id:
                continue
            before = (int(cite.get("first_page", 1)), int(cite.get("last_page", 1)))
            _move_citation(cite, old, new, follow, mid, last)
            after = (int(cite["first_page"]), int(cite["last_page"]))
            spans.setdefault(before, after)
            quotes.setdefault(str(cite.get("quoted_text", "")), after)
        messages.append((_dumps(cites) or "[]", mid))
    db.cursor().executemany("UPDATE message SET citations = ? WHERE id = ?", messages)
    # what the model re-reads (answers' labels and citations, passages) names the new pages
    move_history(db, book_id, PageMover(old, new, last), cited, quoted)

    out.read_to = _moved_page(old, new, old.page_end_quote(read_to), end=True) or read_to
    out.page = _moved_page(old, new, old.page_start_quote(page)) or page
    out.read_to, out.page = max(1, min(out.read_to, last)), max(1, min(out.page, last))
    out.seconds = time.perf_counter() - began
    log.info(
        "re-anchored book %d: %d found (%d changed a little), %d lost, in %.3f s",
        book_id,
        out.found,
        out.fuzzy,
        len(out.lost),
        out.seconds,
    )
    return out


def _moved_page(old: BookText, new: BookText, quote: TextQuote, *, end: bool = False) -> int:
    if not quote.exact:
        return 0
    found = moved(old, new, quote)
    if found is None:
        return 0
    return found.quote.end_page if end else found.quote.page


def _move_citation(
    cite: dict[str, Any], old: BookText, new: BookText, follow: Any, mid: int, last: int
) -> None:
    """A stored citation moved with its words (the book's own, when they were found at the
    answer's save); a citation whose words never were in the book follows its page's start."""
    first, final = int(cite.get("first_page", 1)), int(cite.get("last_page", 1))
    exact = str(cite.get("exact", ""))
    if exact:
        quote = TextQuote(exact, page=first, start=max(0, int(cite.get("start", 0))))
        found = follow(quote, "citation", mid)
        if found is None:
            cite["lost"] = True
            return
        q = found.quote
        cite.pop("lost", None)
        cite.update(exact=q.exact, start=q.start, first_page=q.page)
        cite["last_page"] = max(q.end_page, q.page + (final - first))
    else:
        page = _moved_page(old, new, old.page_start_quote(first)) or first
        cite.update(first_page=page, last_page=page + (final - first))
    cite["first_page"] = min(int(cite["first_page"]), last)
    cite["last_page"] = max(int(cite["first_page"]), min(int(cite["last_page"]), last))


# what was lost -------------------------------------------------------------------------------


def lost_anchors(db: pw.SqliteDatabase, book_id: int) -> list[LostAnchor]:
    """Highlights, notes, threads and citations of a book whose words were not found when it
    was last read again, in page order."""
    out: list[LostAnchor] = []
    for kind, sql in (
        ("highlight", "SELECT id, page, text FROM highlight WHERE book_id = ? AND {}"),
        ("note", "SELECT id, page, text FROM note WHERE book_id = ? AND {}"),
        ("thread", "SELECT id, json_extract(quote, '$.page'), title FROM conversation"),
    ):
        where = "json_extract(quote, '$.lost') = 1"
        query = sql.format(where) if "{}" in sql else sql + f" WHERE book_id = ? AND {where}"
        for row_id, page, text in db.execute_sql(query, (book_id,)).fetchall():
            out.append(LostAnchor(kind, int(row_id), int(page or 0), str(text)))
    for mid, raw in db.execute_sql(
        "SELECT m.id, m.citations FROM message m JOIN conversation c ON c.id = m.conversation_id"
        " WHERE c.book_id = ? AND m.citations LIKE '%\"lost\": true%'",
        (book_id,),
    ).fetchall():
        for cite in _loads(raw) or []:
            if isinstance(cite, dict) and cite.get("lost"):
                text = str(cite.get("exact") or cite.get("quoted_text", ""))
                out.append(LostAnchor("citation", int(mid), int(cite["first_page"]), text))
    return sorted(out, key=lambda a: (a.page, a.kind, a.id))


# threads -------------------------------------------------------------------------------------


def quote_for_selection(
    db: pw.SqliteDatabase, book_id: int, text: str, page: int, near: int = -1
) -> TextQuote:
    """The quote of a selection: its words where they stand on ``page`` (or run on from
    it), closest to ``near``; its words alone at ``page`` when they are not found there
    (a PDF's extracted text may differ from what was selected)."""
    try:
        rows = db.execute_sql(
            "SELECT number, text FROM page_plain WHERE book_id = ? AND number"
            " BETWEEN ? AND ? ORDER BY number",
            (book_id, max(1, page - 1), page + 1),
        ).fetchall()
    except (pw.DatabaseError, sqlite3.DatabaseError):  # damaged text: anchored by its words
        log.warning("book %d: pages near %d unreadable; a passage kept by its words", book_id, page)
        rows = []
    quote = BookText([(int(n), str(t)) for n, t in rows]).quote_of(text, page, near)
    return quote or TextQuote(collapse(text), page=page, end_page=page)


def overlaps(a: TextQuote, b: TextQuote) -> bool:
    """Whether two quotes cover some of the same words."""
    if a.exact == b.exact and a.page == b.page:
        return True
    begin_a, end_a = (a.page, a.start), (a.end_page or a.page, a.end)
    begin_b, end_b = (b.page, b.start), (b.end_page or b.page, b.end)
    return begin_a < end_b and begin_b < end_a


# citations -----------------------------------------------------------------------------------


def resolve_citations(
    db: pw.SqliteDatabase, citations: Iterable[CitationRef], passages: Sequence[Passage] = ()
) -> tuple[CitationRef, ...]:
    """Each citation with the book's own words for its quote and where they start (the
    occurrence on its first page, or running on from it); unchanged when not found. When the
    words stand more than once there, the passage the model read them in (``passages``: what
    the tools returned) says which: the occurrence whose surrounding words are the
    passage's. Never fails: an answer is saved with its citations as the model gave them if
    this goes wrong."""
    citations = tuple(citations)
    try:
        return _resolve(db, citations, passages)
    except Exception:
        log.warning("citations kept as given: finding their words failed", exc_info=True)
        return citations


CITED_CONTEXT = 300  # characters of the passage around a quote that say where it stands


def cited_context(citation: CitationRef, passages: Sequence[Passage]) -> tuple[str, str]:
    """The words before and after ``citation``'s quote in the passage it was read in: a
    passage of exactly its pages (a citation's source names the passage's pages) before one
    that overlaps them, the first that holds the quote once; empty when none does."""
    exact = collapse(citation.quoted_text)
    if not exact:
        return "", ""
    pages = (citation.first_page, citation.last_page)
    near = [
        p
        for p in passages
        if p.book_id == citation.book_id
        and p.last_page >= citation.first_page - 1
        and p.first_page <= citation.last_page + 1
    ]
    for p in sorted(near, key=lambda p: (p.first_page, p.last_page) != pages):
        text = collapse(p.text)
        at = text.find(exact)
        if at < 0 or text.find(exact, at + 1) >= 0:
            continue  # not in it, or twice in it: it cannot tell which
        end = at + len(exact)
        return text[max(0, at - CITED_CONTEXT) : at], text[end : end + CITED_CONTEXT]
    return "", ""


def _resolve(
    db: pw.SqliteDatabase, citations: tuple[CitationRef, ...], passages: Sequence[Passage]
) -> tuple[CitationRef, ...]:
    out = []
    for c in citations:
        if c.exact or not c.quoted_text.strip():
            out.append(c)
            continue
        rows = db.execute_sql(
            "SELECT number, text FROM page_plain WHERE book_id = ? AND number BETWEEN ?"
            " AND ? ORDER BY number",
            (c.book_id, max(1, c.first_page - 1), max(c.first_page, c.last_page) + 1),
        ).fetchall()
        if not rows:
            out.append(c)
            continue
        before, after = cited_context(c, passages)
        book = BookText([(int(n), str(t)) for n, t in rows])
        quote = book.quote_of(c.quoted_text, c.first_page, prefix=before, suffix=after)
        if quote is None or not c.first_page - 1 <= quote.page <= c.last_page + 1:
            out.append(c)
            continue
        first = quote.page
        last = max(quote.end_page, first + max(0, c.last_page - c.first_page))
        out.append(
            replace(c, first_page=first, last_page=last, exact=quote.exact, start=quote.start)
        )
    return tuple(out)


# marks in the margin -------------------------------------------------------------------------


@dataclass(frozen=True)
class AnchoredMark:
    """A passage something is anchored to, for the reader's margin."""

    kind: str  # thread | note
    key: int  # the conversation (thread), the highlight or note (note)
    page: int
    start: int
    exact: str


def anchored_marks(db: pw.SqliteDatabase, book_id: int) -> list[AnchoredMark]:
    """The book's threads, highlights with a note, and notes about a page, at their words
    (what was lost after a re-read stays out: it is listed, not drawn at a guess)."""
    out = []
    for kind, sql in (
        ("thread", "SELECT id, quote FROM conversation WHERE book_id = ? AND quote IS NOT NULL"),
        (
            "note",
            "SELECT id, quote FROM highlight WHERE book_id = ? AND note != ''"
            " AND quote IS NOT NULL",
        ),
        ("note", "SELECT -id, quote FROM note WHERE book_id = ? AND quote IS NOT NULL"),
    ):
        for row_id, raw in db.execute_sql(sql, (book_id,)).fetchall():
            quote = TextQuote.from_json(_loads(raw))
            if quote is not None and not quote.lost and quote.page > 0:
                out.append(AnchoredMark(kind, int(row_id), quote.page, quote.start, quote.exact))
    return sorted(out, key=lambda a: (a.page, a.start, a.kind))
