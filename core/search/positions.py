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
import unicodedata
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
# the ids, integers read from the index, inline; the "+" keeps the list out of FTS5 (given a
# rowid IN (...), FTS5 runs the query once for each id, reading each word's passages from
# the first: 13 ms for 106 passages of a phrase in 50 books, against 0.8 ms as a filter)
_FILTER = "+chunk_index.rowid IN ({})"

Texts = Callable[[list[int]], dict[int, str]]


def _folded(text: str) -> str:
    """Lower case without accents, as unicode61 with remove_diacritics folds words."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


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


_RUN = re.compile(r"[^\W_]*", re.UNICODE)  # the rest of a word (``str.isalnum`` characters)
_MARKS = "\u2018\u2019\u201c\u201d\u2013\u2014"  # curly quotes, en and em dashes
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f\u2000-\u206f]")  # (not punctuation: quotes, dashes)


def stem_prefix(stem: str) -> str:
    """What every word of letters and digits in ASCII whose stem is ``stem`` begins with.
    FTS5's Porter stemmer never touches a word's first letter and only ever rewrites its
    end: of what it writes, only the last "e", "i" or "l", or the "le" of "ble" (from
    "-bility"), can differ from the word's own letters (tests/core/search/test_word_counts.py
    checks it on every word of the fixture books)."""
    if stem.endswith("le"):
        cut = 2
    elif stem.endswith(("e", "i", "l")):
        cut = 1
    else:
        cut = 0
    return stem[: max(1, len(stem) - cut)]


def _ascii_words(lowered: str) -> bool:
    """Whether every letter and digit of ``lowered`` is ASCII, told quickly for a text whose
    only other characters are quotes and dashes (most of a book's passages)."""
    for mark in _MARKS:
        if mark in lowered:
            lowered = lowered.replace(mark, "")
    return lowered.isascii()


def _word_at(lowered: str, at: int) -> str:
    found = _RUN.match(lowered, at)
    return found.group() if found else ""


def _word_starts(lowered: str, prefixes: list[str], initials: set[str]) -> list[int]:
    """Where the words of ``lowered`` that may stem to an asked stem begin: those that begin
    with one of ``prefixes`` (``stem_prefix``), and those with a letter or digit beyond
    ASCII (folding may make it anything) that begin with one of ``initials`` or beyond
    ASCII. Found with ``str.find``: a regular expression that looks at every character took
    three quarters of the time counting took."""
    starts: dict[int, None] = {}
    for prefix in prefixes:
        at = lowered.find(prefix)
        while at >= 0:
            if at == 0 or not lowered[at - 1].isalnum():
                starts[at] = None
            at = lowered.find(prefix, at + 1)
    if not _ascii_words(lowered):
        found = _BEYOND_ASCII.search(lowered)
        while found is not None:
            at = end = found.start()
            if lowered[at].isalnum():  # (each word is looked at once, from its first such)
                while at > 0 and lowered[at - 1].isalnum():
                    at -= 1
                end += len(_word_at(lowered, end))
                if lowered[at] in initials or not lowered[at].isascii():
                    starts[at] = None
            found = _BEYOND_ASCII.search(lowered, end + 1)
    return list(starts)


class _Checker:
    """One in-memory FTS5 table with positions, the index's tokenizer, shared by the threads
    of a process under a lock; emptied after each check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        self._stems: dict[str, str] = {}

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

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        """Word → its stem as the index's tokenizer makes it (remembered; a word the
        tokenizer cuts in two, or drops, maps to its first part, or to nothing)."""
        missing = [w for w in set(words) if w not in self._stems]
        if missing:
            with self._lock:
                con = self._connection()
                try:
                    con.executemany("INSERT INTO w(rowid, x) VALUES (?, ?)", enumerate(missing))
                    found = dict(con.execute("SELECT doc, term FROM wv WHERE offset = 0"))
                finally:
                    self._empty(con)
                if len(self._stems) > 200_000:
                    self._stems.clear()
                for i, word in enumerate(missing):
                    self._stems[word] = found.get(i, "")
        return {w: self._stems.get(w, "") for w in words}

    def counts(self, texts: dict[int, str], words: list[str]) -> dict[int, dict[str, int]]:
        asked: dict[str, list[str]] = {}
        for word, stem in self.stems(words).items():
            if stem:
                asked.setdefault(stem, []).append(word)
        if not asked:
            return {}
        # only words that can stem to an asked stem are cut out and looked up (``stem_prefix``)
        every = sorted({stem_prefix(stem) for stem in asked})
        prefixes = [p for p in every if not any(p != q and p.startswith(q) for q in every)]
        initials = {stem[0] for stem in asked}
        cut: dict[int, list[str]] = {}
        for doc, text in texts.items():
            lowered = text.lower()
            cut[doc] = [
                t if t.isascii() else _folded(t)
                for t in (_word_at(lowered, at) for at in _word_starts(lowered, prefixes, initials))
            ]
        stems = self.stems({t for tokens in cut.values() for t in tokens})
        wanted = {token: stem for token, stem in stems.items() if stem in asked}
        found: dict[int, dict[str, int]] = {}
        for doc, tokens in cut.items():
            counted: dict[str, int] = {}
            for token in tokens:
                hit = wanted.get(token)
                if hit is not None:
                    counted[hit] = counted.get(hit, 0) + 1
            for hit, n in counted.items():
                for word in asked[hit]:
                    found.setdefault(doc, {})[word] = n
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
    text): the texts cut into words as unicode61 cuts them (letters and digits, folded),
    each stemmed by FTS5 itself (an in-memory table, each word once per process)."""
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
