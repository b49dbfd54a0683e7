"""What a search is asked and what it returns, shared by the search of one book
(``fts.BookSearch``), of the whole library (``everywhere``) and the rankings: free text as
quoted FTS5 terms, a passage found (``SearchHit``), and why a query failed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.errors import MarginError
from core.labels import pages_label
from core.store.db import damaged_text, explain

PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it its "
    "me my of on or she so that the their them then there they this to was we were what when "
    "where which who whom why will with would you your about into than".split()
)
MATCHING = "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ? AND rowid BETWEEN ? AND ?"


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


def query_terms(query: str) -> list[str]:
    """The quoted FTS5 terms of free text: its "quoted phrases", then its meaningful words
    (every word when all are stop words), each once, at most 32."""
    phrases: list[str] = []
    for match in PHRASE.finditer(query):
        words = _WORD.findall(match.group(1))
        if words:
            phrases.append(_quote(" ".join(words)))
    rest = PHRASE.sub(" ", query).replace('"', " ")
    # a possessive asks for the word itself: "the banker's son" finds "the banker"
    words = [_POSSESSIVE.sub("", w) or w for w in _WORD.findall(rest)]
    meaningful = [w for w in words if w.lower() not in STOPWORDS]
    terms = meaningful or words
    seen: set[str] = set()
    parts: list[str] = []
    for term in phrases + [_quote(t) for t in terms]:
        key = term.lower()
        if key not in seen:
            seen.add(key)
            parts.append(term)
    return parts[:32]


def sanitize_query(query: str, *, any_term: bool = False) -> str:
    """An FTS5 MATCH expression for free text; "" when there is nothing to search for."""
    return (" OR " if any_term else " AND ").join(query_terms(query))


def make_hit(row: tuple[Any, ...], snippet: str, score: float) -> SearchHit:
    return SearchHit(row[0], row[1], row[2], row[3], row[4], row[5], snippet, score)


def opening(text: str, words: int = 24) -> str:
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


def search_failed(exc: Exception, book_id: int | None) -> MarginError:
    """Why a search query failed, for people. Its expression is always valid FTS5 (see
    ``sanitize_query``), so past a busy or full database the cause is damaged stored text
    or index, which reading the book again rebuilds."""
    known = explain(exc)
    if known is not None:
        return known
    book = f"book {book_id}" if book_id is not None else "a book"
    return damaged_text(f"the search index or stored text of {book}", book_id)
