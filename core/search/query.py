"""What a search is asked, without the search itself: free text as quoted FTS5 terms, and a
passage's opening words. Light (no peewee, no dataclasses) for the read-only
``margin search --all``; ``core.search.hits`` re-exports these."""

from __future__ import annotations

import re

PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it its "
    "me my of on or she so that the their them then there they this to was we were what when "
    "where which who whom why will with would you your about into than".split()
)
MATCHING = "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ? AND rowid BETWEEN ? AND ?"


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


def opening(text: str, words: int = 24) -> str:
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")
