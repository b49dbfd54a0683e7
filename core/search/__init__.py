"""Full-text search (FTS5, BM25) over imported books, with the reader's page bound.

The names below are loaded when first used (PEP 562): importing a light module of this
package (``core.search.query``, ``core.search.everywhere``) must not load the book search,
peewee and the vectors (``margin search --all`` reads the library with ``sqlite3`` alone)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.search.fts import MARK_END, MARK_START, BookSearch
    from core.search.hits import SearchHit, sanitize_query

__all__ = ["MARK_END", "MARK_START", "BookSearch", "SearchHit", "sanitize_query"]
_HOMES = {
    "MARK_END": "core.search.fts",
    "MARK_START": "core.search.fts",
    "BookSearch": "core.search.fts",
    "SearchHit": "core.search.hits",
    "sanitize_query": "core.search.hits",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'core.search' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
