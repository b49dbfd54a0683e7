"""A search hit's snippet: about 24 words of its passage around the query's words, each
matched word between « and » (``core.labels``), "…" where the passage goes on.

Built from the passage text search has already read, instead of FTS5's ``snippet()``, which
reads and unpacks each passage again through the ``chunk_text`` view (about 70 µs a passage:
a third of a library search's time). Words match as the index matches them, closely enough
for a snippet: case and accents folded, and a light stemming (plurals, -ed, -ing, -ly,
possessives) standing in for FTS5's Porter stemmer.
"""

from __future__ import annotations

import re
import unicodedata

from core.labels import QUOTE_CLOSE, QUOTE_OPEN

WORDS = 24
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")


def fold(word: str) -> str:
    """Lower case without accents ("Café" → "cafe"), as the index's tokenizer sees it."""
    lowered = word.lower().replace("’", "'")
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A light stem of a folded word: possessive, then one common suffix, removed."""
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def query_stems(terms: list[str]) -> set[str]:
    """The stems of every word of the query's quoted FTS5 terms (phrases give each word)."""
    return {stem(fold(w)) for term in terms for w in _WORD.findall(term)}


def make_snippet(text: str, wanted: set[str], words: int = WORDS) -> str:
    """About ``words`` words of ``text`` where the most of the ``wanted`` stems are, each
    matched word marked; "" when none of them is in ``text``."""
    tokens = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    hits = [i for i, (a, b) in enumerate(tokens) if stem(fold(text[a:b])) in wanted]
    if not hits:
        return ""
    best, best_key = 0, (-1, -1)
    for first in hits:  # a window starts a little before a matched word
        start = max(0, min(first - 2, len(tokens) - words))
        inside = [i for i in hits if start <= i < start + words]
        kinds = {stem(fold(text[tokens[i][0] : tokens[i][1]])) for i in inside}
        key = (len(kinds), len(inside))
        if key > best_key:
            best, best_key = start, key
    last = min(len(tokens), best + words) - 1
    marked = set(hits)
    out: list[str] = []
    at = tokens[best][0]
    for i in range(best, last + 1):
        a, b = tokens[i]
        out.append(text[at:a])
        out.append(f"{QUOTE_OPEN}{text[a:b]}{QUOTE_CLOSE}" if i in marked else text[a:b])
        at = b
    body = " ".join("".join(out).split())
    return ("…" if best > 0 else "") + body + ("…" if last < len(tokens) - 1 else "")
