"""Full-text search (FTS5, BM25) over imported books, with the reader's page bound."""

from core.search.fts import MARK_END, MARK_START, BookSearch
from core.search.hits import SearchHit, sanitize_query

__all__ = ["MARK_END", "MARK_START", "BookSearch", "SearchHit", "sanitize_query"]
