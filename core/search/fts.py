"""BM25 search over the FTS5 index of a book's chunks.

Any text a person types is a valid query: it is turned into quoted FTS5 terms, so operators
(AND, NEAR, *, parentheses, colons) are just words and never a syntax error. Text inside
double quotes stays a phrase. All terms must match first; when nothing does, any term may
(natural-language questions still find passages); passages with every term come first and
passages with only some of them fill the remaining places. The reader's page bound is a SQL
condition, so the best passages before that page are found, not the best few filtered
afterwards.

Speed: FTS5 MATCH would rank every matching chunk of the whole library before a ``book_id``
filter. A book's chunks are written in one transaction, so their ids are contiguous and in
page order: the query is restricted to the book's rowid range (ending at the last chunk
within the bound) inside the FTS5 query itself, ranked there, and snippets are built for the
few top hits only.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.errors import MarginError
from core.labels import QUOTE_CLOSE, QUOTE_OPEN, pages_label
from core.search.frontmatter import is_front_matter
from core.search.vectors import BookVectors

_PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it its "
    "me my of on or she so that the their them then there they this to was we were what when "
    "where which who whom why will with would you your about into than".split()
)
MARK_START = QUOTE_OPEN
MARK_END = QUOTE_CLOSE
SNIPPET = f"snippet(chunk_index, 0, '{MARK_START}', '{MARK_END}', '…', 24)"
# The plans (tests/core/search checks them with EXPLAIN QUERY PLAN): the book's chunk id
# range from the (book_id, end_page) index, then FTS5 restricted to that rowid range and
# ranked inside the index (ORDER BY rank: no sorter, snippets only for the rows returned).
RANGE = "SELECT min(id), max(id) FROM chunk WHERE book_id = ?"
RANGE_UNTIL = (
    "SELECT min(id), max(CASE WHEN end_page <= ? THEN id END) FROM chunk WHERE book_id = ?"
)
RANKED = (
    f"SELECT rowid, rank, {SNIPPET} FROM chunk_index "
    "WHERE chunk_index MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT ?"
)

POOL = 20  # candidates from each ranking before fusion
RRF_K = 60
KEYWORD_WEIGHT = 0.5  # the dense ranking leads ties (tests/bench/eval_search.py)
MERGE_MAX = 3


@dataclass(frozen=True)
class SearchHit:
    chunk_id: int
    book_id: int
    start_page: int
    end_page: int
    chapter: int
    text: str
    snippet: str
    score: float

    @property
    def pages(self) -> str:
        return pages_label(self.start_page, self.end_page)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def sanitize_query(query: str, *, any_term: bool = False) -> str:
    """An FTS5 MATCH expression for free text; "" when there is nothing to search for."""
    phrases: list[str] = []
    for match in _PHRASE.finditer(query):
        words = _WORD.findall(match.group(1))
        if words:
            phrases.append(_quote(" ".join(words)))
    rest = _PHRASE.sub(" ", query).replace('"', " ")
    words = _WORD.findall(rest)
    meaningful = [w for w in words if w.lower() not in STOPWORDS]
    terms = meaningful or words
    seen: set[str] = set()
    parts: list[str] = []
    for term in phrases + [_quote(t) for t in terms]:
        key = term.lower()
        if key not in seen:
            seen.add(key)
            parts.append(term)
    return (" OR " if any_term else " AND ").join(parts[:32])


class BookSearch:
    """Full-text search over the library database it is given."""

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db
        self.vectors = BookVectors(db)

    def chunk_range(self, book_id: int, until_page: int | None = None) -> tuple[int, int] | None:
        """The first and last chunk id of a book (the last within ``until_page``)."""
        if until_page is None:
            row = self.db.execute_sql(RANGE, (book_id,)).fetchone()
        else:
            row = self.db.execute_sql(RANGE_UNTIL, (until_page, book_id)).fetchone()
        if row is None or row[0] is None or row[1] is None:
            return None
        return int(row[0]), int(row[1])

    def _run(
        self, expression: str, rowids: tuple[int, int], book_id: int, limit: int
    ) -> list[SearchHit]:
        # ORDER BY rank: FTS5 sorts inside the index, so SQLite needs no sorter and builds
        # snippets only for the rows it returns (a snippet per match would cost far more).
        try:
            ranked = self.db.execute_sql(
                RANKED, (expression, rowids[0], rowids[1], limit)
            ).fetchall()
        except (sqlite3.OperationalError, pw.OperationalError) as exc:
            raise _failed(exc, book_id) from exc
        if not ranked:
            return []
        snippets = {int(r[0]): str(r[2] or "") for r in ranked}
        scores = {int(r[0]): -float(r[1]) for r in ranked}
        return self._hits([int(r[0]) for r in ranked], book_id, snippets, scores)

    def _hits(
        self, ids: list[int], book_id: int, snippets: dict[int, str], scores: dict[int, float]
    ) -> list[SearchHit]:
        """The chunks ``ids`` of the book as hits, in the order given."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        try:
            rows = {
                int(r[0]): r
                for r in self.db.execute_sql(
                    "SELECT c.id, c.book_id, c.start_page, c.end_page, c.chapter, t.text "
                    "FROM chunk c JOIN chunk_text t ON t.id = c.id "
                    f"WHERE c.id IN ({marks}) AND c.book_id = ?",
                    (*ids, book_id),
                ).fetchall()
            }
        except (sqlite3.OperationalError, pw.OperationalError) as exc:
            raise _failed(exc, book_id) from exc
        hits = []
        for chunk_id in ids:
            row = rows.get(chunk_id)
            if row is None:
                continue
            hits.append(
                SearchHit(
                    chunk_id=row[0],
                    book_id=row[1],
                    start_page=row[2],
                    end_page=row[3],
                    chapter=row[4],
                    text=row[5],
                    snippet=snippets.get(chunk_id) or _opening(row[5]),
                    score=scores.get(chunk_id, 0.0),
                )
            )
        return hits

    def search_book(
        self,
        book_id: int,
        query: str,
        *,
        limit: int = 5,
        until_page: int | None = None,
        hybrid: bool = True,
    ) -> list[SearchHit]:
        """Best passages of one book for ``query``, best first; only passages ending on or
        before ``until_page`` when it is given. Empty or punctuation-only queries give no
        hits; front matter (contents, title, licence) never does.

        ``hybrid``: BM25 and the nearest chunks in meaning (``core.search.vectors``),
        combined by reciprocal rank fusion; a book without vectors yet is searched by BM25
        alone. Neighbouring chunks among the best are merged into one passage."""
        limit = max(1, min(int(limit), 100))
        strict = sanitize_query(query)
        if not strict:
            return []
        rowids = self.chunk_range(book_id, until_page)
        if rowids is None:
            return []
        pool = max(POOL, limit * 3)
        hybrid = hybrid and not _PHRASE.search(query)  # a "quoted phrase" asks for those words
        keyword, every = self._keyword(query, strict, rowids, book_id, pool)
        if not keyword:
            return []  # not one word of the query is in the book: nothing near it in meaning
        dense = self.vectors.nearest(book_id, query, rowids, pool) if hybrid else None
        if dense is None:
            ranked = [h.chunk_id for h in keyword]
        else:
            fused = fuse([h.chunk_id for h in keyword], [c for c, _ in dense])
            # passages with every word of the query stay first (a reader's own words)
            ranked = [c for c in fused if c in every] + [c for c in fused if c not in every]
        known = {h.chunk_id: h for h in keyword}
        scores = dict(dense or ())
        missing = [c for c in ranked[: limit * 2 + 4] if c not in known]
        for hit in self._hits(missing, book_id, {}, scores):
            known[hit.chunk_id] = hit
        hits = [known[c] for c in ranked if c in known and not is_front_matter(known[c].text)]
        return merge_neighbours(hits, limit)

    def _keyword(
        self, query: str, strict: str, rowids: tuple[int, int], book_id: int, limit: int
    ) -> tuple[list[SearchHit], set[int]]:
        """BM25: passages with every term first, then passages with some of them; and the
        ids of the first kind."""
        hits = self._run(strict, rowids, book_id, limit)
        every = {h.chunk_id for h in hits}
        if len(hits) < limit:
            loose = sanitize_query(query, any_term=True)
            if loose != strict:
                seen = {h.chunk_id for h in hits}
                extra = [
                    h for h in self._run(loose, rowids, book_id, limit) if h.chunk_id not in seen
                ]
                hits.extend(extra[: limit - len(hits)])
        return hits, every

    def continues_beyond(self, book_id: int, until_page: int) -> bool:
        """Whether the book has text after ``until_page`` (never how much matches a query:
        a count tied to the query would tell the model whether a phrase occurs later)."""
        row = self.db.execute_sql(
            "SELECT 1 FROM chunk WHERE book_id = ? AND end_page > ? LIMIT 1", (book_id, until_page)
        ).fetchone()
        return row is not None

    def search_library(self, query: str, *, limit: int = 20) -> list[SearchHit]:
        """Best passages across every book in the library."""
        expression = sanitize_query(query, any_term=True)
        if not expression:
            return []
        try:
            rows = self._library_rows(expression, limit)
        except (sqlite3.OperationalError, pw.OperationalError) as exc:
            raise _failed(exc, None) from exc
        return [SearchHit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], -float(r[7])) for r in rows]

    def _library_rows(self, expression: str, limit: int) -> list[Any]:
        return self.db.execute_sql(
            "SELECT c.id, c.book_id, c.start_page, c.end_page, c.chapter, t.text, "
            f"{SNIPPET}, bm25(chunk_index) "
            "FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid "
            "JOIN chunk_text t ON t.id = c.id "
            "JOIN book b ON b.id = c.book_id "
            "WHERE chunk_index MATCH ? AND b.status = 'ready' ORDER BY bm25(chunk_index) LIMIT ?",
            (expression, max(1, min(limit, 100))),
        ).fetchall()


def fuse(keyword: list[int], dense: list[int], *, k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of two rankings of chunk ids (best first)."""
    score: dict[int, float] = {}
    for weight, ranking in ((KEYWORD_WEIGHT, keyword), (1.0, dense)):
        for rank, chunk_id in enumerate(ranking):
            score[chunk_id] = score.get(chunk_id, 0.0) + weight / (k + rank + 1)
    return sorted(score, key=lambda c: -score[c])


def merge_neighbours(hits: list[SearchHit], limit: int) -> list[SearchHit]:
    """The first ``limit`` passages, where a hit that continues (or is continued by) a better
    one is joined to it instead of taking a place of its own (at most MERGE_MAX chunks)."""
    groups: list[list[SearchHit]] = []
    for hit in hits:
        for group in groups:
            ids = [h.chunk_id for h in group]
            if (
                len(group) < MERGE_MAX
                and hit.chapter == group[0].chapter
                and (hit.chunk_id == min(ids) - 1 or hit.chunk_id == max(ids) + 1)
            ):
                group.append(hit)
                break
        else:
            if len(groups) >= limit:
                continue
            groups.append([hit])
    return [_joined(g) for g in groups]


def _joined(group: list[SearchHit]) -> SearchHit:
    if len(group) == 1:
        return group[0]
    best = group[0]
    ordered = sorted(group, key=lambda h: h.chunk_id)
    text = ordered[0].text
    for hit in ordered[1:]:
        head, _, rest = hit.text.partition("\n\n")
        # a chunk starts with the tail of the one before it (chunking's overlap)
        text = text + ("\n\n" + rest if rest and text.endswith(head) else "\n\n" + hit.text)
    return SearchHit(
        chunk_id=ordered[0].chunk_id,
        book_id=best.book_id,
        start_page=min(h.start_page for h in group),
        end_page=max(h.end_page for h in group),
        chapter=best.chapter,
        text=text,
        snippet=best.snippet,
        score=best.score,
    )


def _opening(text: str, words: int = 24) -> str:
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


def _failed(exc: Exception, book_id: int | None) -> MarginError:
    """Why a search query failed, for people. Its expression is always valid FTS5 (see
    ``sanitize_query``), so past a busy or full database the cause is damaged stored text
    or index, which reading the book again rebuilds."""
    from core.store.db import damaged_text, explain

    known = explain(exc)
    if known is not None:
        return known
    book = f"book {book_id}" if book_id is not None else "a book"
    return damaged_text(f"the search index or stored text of {book}", book_id)
