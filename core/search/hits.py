"""What a search is asked and what it returns, shared by the search of one book
(``fts.BookSearch``), of the whole library (``everywhere``) and the rankings: free text as
quoted FTS5 terms, a passage found (``SearchHit``), and why a query failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import MarginError
from core.labels import pages_label
from core.search.query import (  # noqa: F401  (re-exported)
    MATCHING,
    PHRASE,
    STOPWORDS,
    opening,
    query_terms,
    sanitize_query,
)


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


def make_hit(row: tuple[Any, ...], snippet: str, score: float) -> SearchHit:
    return SearchHit(row[0], row[1], row[2], row[3], row[4], row[5], snippet, score)


def search_failed(exc: Exception, book_id: int | None) -> MarginError:
    """Why a search query failed, for people. Its expression is always valid FTS5 (see
    ``sanitize_query``), so past a busy or full database the cause is damaged stored text
    or index, which reading the book again rebuilds."""
    from core.store.db import damaged_text, explain  # only on failure: peewee

    known = explain(exc)
    if known is not None:
        return known
    book = f"book {book_id}" if book_id is not None else "a book"
    return damaged_text(f"the search index or stored text of {book}", book_id)
