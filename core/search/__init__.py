"""Full-text search (FTS5, BM25) over imported books, with the reader's page bound."""

from core.search.fts import (
    MARK_END,
    MARK_START,
    SearchHit,
    count_beyond,
    sanitize_query,
    search_book,
    search_library,
)

__all__ = [
    "MARK_END",
    "MARK_START",
    "SearchHit",
    "count_beyond",
    "sanitize_query",
    "search_book",
    "search_library",
]
