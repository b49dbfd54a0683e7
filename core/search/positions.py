"""Phrases and NEAR on a search index without positions (issue 41).

The word index ``chunk_index`` keeps, for each word, which passages hold it, and not where
(FTS5 ``detail=none``: a third of the size of ``detail=full``; tests/bench/bench_fts_detail.py).
FTS5 refuses a phrase ("queen of hearts", a quoted word with an apostrophe such as "don't",
which it reads as the two words "don" "t") or a ``NEAR`` group on such an index. So a query
that has one is asked in two steps:

1. the index finds the candidates: the same expression with each phrase and each ``NEAR``
   group loosened into an AND of its words (``loosen``);
2. the candidates' own text is put, for this one query, into a small FTS5 table in memory
   with positions and the very same tokenizer, and the original expression picks the
   passages that really match (``keep_matching``). The answer is FTS5's own, word for word.

The passages' text is read with ``core.search.rows.chunk_rows`` (each page unpacked once).
Light, like ``core.search.query``: no peewee (the read-only ``margin search --all`` uses it).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable
from typing import Any

from core.search.rows import chunk_rows

TOKENIZE = "porter unicode61 remove_diacritics 2"
# a quoted string (FTS5 doubles a quote inside one), a NEAR( ... , N) group, anything else
_PART = re.compile(r'"(?:[^"]|"")*"|NEAR\s*\((?:"(?:[^"]|"")*"|[^")])*\)|[^"N]+|N', re.UNICODE)
_NEAR_GROUP = re.compile(r'NEAR\s*\(((?:"(?:[^"]|"")*"|[^")])*)\)', re.UNICODE)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_PIECE = re.compile(r"[^\W_]+", re.UNICODE)  # unicode61's token characters (letters, numbers)
_BATCH = 500  # candidate passages read and checked at a time
_FILTER = "chunk_index.rowid IN ({})"  # the ids, integers read from the index, inline

Texts = Callable[[list[int]], dict[int, str]]


def _pieces(quoted: str) -> list[str]:
    """The words of a quoted FTS5 string, as the tokenizer cuts them (before stemming)."""
    return _PIECE.findall(quoted[1:-1].replace('""', '"'))


def _and(pieces: list[str]) -> str:
    return "(" + " AND ".join('"' + p.replace('"', '""') + '"' for p in pieces) + ")"


def needs_positions(expression: str) -> bool:
    """Whether an FTS5 expression has a phrase of several words or a ``NEAR`` group."""
    if _NEAR_GROUP.search(_QUOTED.sub('""', expression)):
        return True
    return any(len(_pieces(m.group(0))) > 1 for m in _QUOTED.finditer(expression))


def loosen(expression: str) -> str:
    """The expression with each phrase and each ``NEAR`` group an AND of its words: it
    matches every passage the expression matches (and some more)."""

    def phrase(found: re.Match[str]) -> str:
        pieces = _pieces(found.group(0))
        return _and(pieces) if len(pieces) > 1 else found.group(0)

    def near(found: re.Match[str]) -> str:
        inner = re.sub(r",\s*\d+\s*$", "", found.group(1))
        words = [p for q in _QUOTED.finditer(inner) for p in _pieces(q.group(0))]
        return _and(words) if words else '""'

    out = []
    for found in _PART.finditer(expression):
        part = found.group(0)
        if part.startswith('"'):
            out.append(phrase(_QUOTED.match(part)))  # type: ignore[arg-type]
        elif part.startswith("NEAR"):
            out.append(near(_NEAR_GROUP.match(part)))  # type: ignore[arg-type]
        else:
            out.append(part)
    return "".join(out)


class _Checker:
    """One in-memory FTS5 table with positions, the index's tokenizer, shared by the threads
    of a process under a lock; emptied after each check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            con = sqlite3.connect(":memory:", check_same_thread=False)
            for table in ("t", "w"):  # passages; the words asked about
                con.execute(
                    f"CREATE VIRTUAL TABLE {table} USING fts5(x, content='', tokenize='{TOKENIZE}')"
                )
                con.execute(f"CREATE VIRTUAL TABLE {table}v USING fts5vocab({table}, instance)")
            self._con = con
        return self._con

    @staticmethod
    def _empty(con: sqlite3.Connection) -> None:
        for table in ("t", "w"):
            con.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
        con.commit()

    def counts(self, texts: dict[int, str], words: list[str]) -> dict[int, dict[str, int]]:
        if not texts or not words:
            return {}
        found: dict[int, dict[str, int]] = {}
        with self._lock:
            con = self._connection()
            try:
                con.executemany("INSERT INTO w(rowid, x) VALUES (?, ?)", enumerate(words))
                stems: dict[str, list[str]] = {}
                for doc, term in con.execute("SELECT doc, term FROM wv WHERE offset = 0"):
                    stems.setdefault(term, []).append(words[int(doc)])
                con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", texts.items())
                for stem, asked in stems.items():
                    for doc, n in con.execute(
                        "SELECT doc, count(*) FROM tv WHERE term = ? GROUP BY doc", (stem,)
                    ):
                        for word in asked:
                            found.setdefault(int(doc), {})[word] = int(n)
            finally:
                self._empty(con)
        return found

    def matching(self, expression: str, texts: dict[int, str]) -> set[int]:
        if not texts:
            return set()
        with self._lock:
            con = self._connection()
            try:
                con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", texts.items())
                return {
                    int(r[0])
                    for r in con.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))
                }
            finally:
                self._empty(con)


_CHECKER = _Checker()


def chunk_texts(db: Any) -> Texts:
    """Reads passages' text for ``verified`` (``rows.chunk_rows``, any book)."""
    return lambda ids: {int(c): str(row[5]) for c, row in chunk_rows(db, ids, None).items()}


def keep_matching(expression: str, texts: dict[int, str]) -> set[int]:
    """The ids among ``texts`` (id → passage text) that ``expression`` matches, phrases and
    ``NEAR`` included, exactly as FTS5 with positions would match them."""
    return _CHECKER.matching(expression, texts)


def word_counts(texts: dict[int, str], words: list[str]) -> dict[int, dict[str, int]]:
    """How many times each of ``words`` (a word each) occurs in each of ``texts`` (id →
    text), counted as the index's tokenizer cuts and stems them (FTS5 itself, in memory)."""
    return _CHECKER.counts(texts, words)


def verified(
    db: Any, expression: str, texts: Texts, rowids: tuple[int, int] | None = None
) -> list[int]:
    """The passages of ``chunk_index`` (within ``rowids`` when given) that ``expression``
    matches, in id order: candidates from the index, checked on their text."""
    sql = "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?"
    params: tuple[Any, ...] = (loosen(expression),)
    if rowids is not None:
        sql += " AND rowid BETWEEN ? AND ?"
        params += tuple(rowids)
    candidates = [int(r[0]) for r in db.execute_sql(sql, params).fetchall()]
    found: list[int] = []
    for start in range(0, len(candidates), _BATCH):
        batch = candidates[start : start + _BATCH]
        found.extend(sorted(keep_matching(expression, texts(batch))))
    return found


def execute(
    db: Any,
    sql: str,
    params: Iterable[Any],
    texts: Texts,
    rowids: tuple[int, int] | None = None,
) -> list[Any]:
    """Run ``sql``, a query on ``chunk_index`` whose first parameter is its MATCH expression
    (``... chunk_index MATCH ? ...``), on an index without positions: as it is when the
    expression needs none; else with the loosened expression, restricted to the passages
    the original one matches (``verified``, within ``rowids`` when given). Ordering and
    LIMIT stay the statement's own. A query on another table (``cjk_index``, which keeps
    its positions) runs as it is."""
    values = list(params)
    expression = str(values[0])
    if "chunk_index MATCH ?" not in sql or not needs_positions(expression):
        return list(db.execute_sql(sql, tuple(values)).fetchall())
    keep = verified(db, expression, texts, rowids)
    if not keep:
        return []
    ids = _FILTER.format(",".join(str(int(i)) for i in keep))
    restricted = sql.replace("chunk_index MATCH ?", f"chunk_index MATCH ? AND {ids}", 1)
    return list(db.execute_sql(restricted, (loosen(expression), *values[1:])).fetchall())
