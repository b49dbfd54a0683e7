"""Search of Chinese and Japanese text, which puts no spaces between words.

The word index (``chunk_index``, FTS5 ``unicode61``) takes a run of ideographs and kana as
one word: "日本の小説家" is a single term, so "小説家" is never found inside it. Beside it,
``cjk_index`` holds the passages that have such text, each run cut into overlapping pairs of
characters (bigrams, as Lucene's CJK analyser does) plus the run's last character alone:
"日本の小説家" is indexed as ``日本 本の の小 小説 説家 家``. A query's run becomes the
phrase of its pairs ("小説家" → ``"小説 説家"``), found wherever those characters stand
side by side, and a single character is a prefix (``"猫"*``: a pair starting with it, or a
run ending with it). Any word or phrase is found, with no dictionary: a segmenter (a
dictionary and a model, 20-50 MB) would find only the words it cuts alike in the passage
and the query, and misses names it does not know.

Only passages with such text are written to ``cjk_index`` (a book in English costs nothing),
and only queries with such text read it (``route``): the rest of search is unchanged. The
write side (cutting, import, removal) is ``core.store.cjk_index``.
"""

from __future__ import annotations

import re

from core.store.cjk_index import HAS, RUN_CHARS, TABLE, LazyPattern, has_cjk, pairs

_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_PIECES = LazyPattern(f"([{RUN_CHARS}]+)")


def _query_phrase(text: str) -> str:
    """An FTS5 phrase (or prefix) for one quoted query term."""
    parts: list[str] = []
    for piece in _PIECES.split(text):
        if not piece:
            continue
        if HAS.match(piece):
            parts.extend(pairs(piece) if len(piece) > 1 else [piece])
        else:
            parts.extend(piece.split())
    phrase = '"' + " ".join(parts).replace('"', '""') + '"'
    if len(parts) == 1 and len(parts[0]) == 1 and HAS.match(parts[0]):
        return phrase + "*"  # one character: the pairs it starts and the runs it ends
    return phrase


def expression(match: str) -> str:
    """An FTS5 expression of quoted terms (``hits.query_terms``) rewritten for
    ``cjk_index``: each quoted term with such characters becomes its phrase of pairs."""

    def rewrite(found: re.Match[str]) -> str:
        term = found.group(1).replace('""', '"')
        return _query_phrase(term) if has_cjk(term) else found.group(0)

    return _QUOTED.sub(rewrite, match)


def route(sql: str, match: str) -> tuple[str, str]:
    """The query ``sql`` (written against ``chunk_index``) and its MATCH expression, sent
    to ``cjk_index`` when the expression holds such characters; unchanged otherwise."""
    if not has_cjk(match):
        return sql, match
    return sql.replace("chunk_index", TABLE), expression(match)
