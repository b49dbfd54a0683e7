"""BM25 search over the FTS5 index of a book's chunks.

Any text a person types is a valid query: it is turned into quoted FTS5 terms, so operators
(AND, NEAR, *, parentheses, colons) are just words and never a syntax error. Text inside
double quotes stays a phrase. All terms must match first; when nothing does, any term may
(natural-language questions still find passages); passages with every term come first and
passages with only some of them fill the remaining places. The reader's page bound is a SQL condition,
so the best passages before that page are found, not the best few filtered afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.store.models import database

_PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it its "
    "me my of on or she so that the their them then there they this to was we were what when "
    "where which who whom why will with would you your about into than".split()
)
MARK_START = "«"
MARK_END = "»"


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
        return (
            f"p. {self.start_page}"
            if self.start_page == self.end_page
            else f"pp. {self.start_page}–{self.end_page}"
        )


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def sanitize_query(query: str, *, any_term: bool = False) -> str:
    """An FTS5 MATCH expression for free text; "" when there is nothing to search for."""
    phrases: list[str] = []
    rest = query
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


def _run(book_id: int, expression: str, limit: int, until_page: int | None) -> list[SearchHit]:
    sql = (
        "SELECT c.id, c.book_id, c.start_page, c.end_page, c.chapter, c.text, "
        f"snippet(chunk_index, 0, '{MARK_START}', '{MARK_END}', '…', 24), bm25(chunk_index) "
        "FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid "
        "WHERE chunk_index MATCH ? AND c.book_id = ?"
    )
    params: list[object] = [expression, book_id]
    if until_page is not None:
        sql += " AND c.end_page <= ?"
        params.append(until_page)
    sql += " ORDER BY bm25(chunk_index) LIMIT ?"
    params.append(limit)
    rows = database.execute_sql(sql, params).fetchall()
    return [
        SearchHit(
            chunk_id=r[0],
            book_id=r[1],
            start_page=r[2],
            end_page=r[3],
            chapter=r[4],
            text=r[5],
            snippet=r[6],
            score=-float(r[7]),
        )
        for r in rows
    ]


def search_book(
    book_id: int, query: str, *, limit: int = 5, until_page: int | None = None
) -> list[SearchHit]:
    """Best passages of one book for ``query``, best first; only passages ending on or before
    ``until_page`` when it is given. Empty or punctuation-only queries give no hits."""
    limit = max(1, min(int(limit), 100))
    strict = sanitize_query(query)
    if not strict:
        return []
    hits = _run(book_id, strict, limit, until_page)
    if len(hits) < limit:
        loose = sanitize_query(query, any_term=True)
        if loose != strict:
            seen = {h.chunk_id for h in hits}
            extra = [h for h in _run(book_id, loose, limit, until_page) if h.chunk_id not in seen]
            hits.extend(extra[: limit - len(hits)])
    return hits


def count_beyond(book_id: int, query: str, until_page: int) -> int:
    """How many passages match ``query`` beyond the reader's page (for "there is more later")."""
    expression = sanitize_query(query, any_term=True)
    if not expression:
        return 0
    row = database.execute_sql(
        "SELECT count(*) FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid "
        "WHERE chunk_index MATCH ? AND c.book_id = ? AND c.end_page > ?",
        (expression, book_id, until_page),
    ).fetchone()
    return int(row[0])


def search_library(query: str, *, limit: int = 20) -> list[SearchHit]:
    """Best passages across every book in the library."""
    expression = sanitize_query(query, any_term=True)
    if not expression:
        return []
    rows = database.execute_sql(
        "SELECT c.id, c.book_id, c.start_page, c.end_page, c.chapter, c.text, "
        f"snippet(chunk_index, 0, '{MARK_START}', '{MARK_END}', '…', 24), bm25(chunk_index) "
        "FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid JOIN book b ON b.id = c.book_id "
        "WHERE chunk_index MATCH ? AND b.status = 'ready' ORDER BY bm25(chunk_index) LIMIT ?",
        (expression, max(1, min(limit, 100))),
    ).fetchall()
    return [SearchHit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], -float(r[7])) for r in rows]
