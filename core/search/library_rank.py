"""How the library's search ranks passages (``core.search.everywhere``): what one search has
read (``Seen``: each term's passages, their lengths, passages' rows), the passages holding
the query's terms, their BM25 with each term counted once, and the best of them scored
again on their words counted in their text (``recount``).

Light, like ``core.search.everywhere``: no peewee (the read-only ``margin search --all``)."""

from __future__ import annotations

from typing import Any, Protocol

from core.search import positions
from core.search.cjk import route
from core.search.rows import TERM_LENGTHS, index_lengths, once_bm25, stored_length
from core.store.cjk_index import has_cjk

KEPT_ROWS = 4000  # passages' rows one search keeps for reading again (a few MB at most)
ALL_MATCHING = "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?"
COUNT_ALL = "SELECT count(*) FROM chunk_index WHERE chunk_index MATCH ?"


class Chunks(Protocol):
    """What the library's search reads through the book search (``fts.BookSearch``)."""

    db: Any  # peewee's database, or anything with its ``execute_sql``

    def chunk_range(self, book_id: int, until_page: int | None = None) -> tuple[int, int] | None:
        """The first and last chunk id of a book (the last within ``until_page``)."""

    def _rows(self, ids: list[int], book_id: int | None) -> dict[int, tuple[Any, ...]]:
        """(id, book, first page, last page, chapter, text) of chunks, by id."""


Figures = tuple[dict[str, float], dict[int, int], float]  # terms' weights, lengths, mean


class Seen:
    """What one library search has read: each term's passages (a phrase checked once) or
    only how many they are, passages' lengths in the index, and passages' rows. A phrase's
    check reads every passage its words are in; the re-score (``recount``) and the passages
    shown read the best of them again."""

    def __init__(self, search: Chunks) -> None:
        self.search = search
        self.sets: dict[str, set[int]] = {}
        self.counts: dict[str, int] = {}
        self.lengths: dict[int, int] = {}
        self.sized: set[int] = set()  # passages whose length was looked for (not all have one)
        self.read: dict[int, tuple[Any, ...]] = {}

    def rows(self, ids: list[int]) -> dict[int, tuple[Any, ...]]:
        """(id, book, first page, last page, chapter, text) of chunks, read once (up to
        ``KEPT_ROWS`` of them kept: a phrase of common words can be checked on most of a
        large library)."""
        missing = [c for c in ids if c not in self.read]
        got = self.search._rows(missing, None) if missing else {}
        if len(self.read) < KEPT_ROWS:
            self.read.update(got)
        return {c: got[c] if c in got else self.read[c] for c in ids if c in got or c in self.read}

    def texts(self, ids: list[int]) -> dict[int, str]:
        """Passages' text for a phrase's check (``positions.Texts``)."""
        return {c: str(row[5]) for c, row in self.rows(ids).items()}

    def count(self, term: str) -> int:
        """How many passages hold ``term`` (FTS5's count, for its weight)."""
        if term in self.sets:
            return len(self.sets[term])
        if term not in self.counts:
            sql, match = route(COUNT_ALL, term)
            row = self.search.db.execute_sql(sql, (match,)).fetchone()
            self.counts[term] = int(row[0]) if row else 0
        return self.counts[term]

    def matching(self, expression: str) -> set[int]:
        """The passages an expression of plain terms (``plain``) matches, their lengths
        read in the same query (``rows.TERM_LENGTHS``: a list of thousands of ids for
        ``index_lengths`` took longer than the search)."""
        found = set()
        for chunk_id, size in self.search.db.execute_sql(TERM_LENGTHS, (expression,)).fetchall():
            found.add(chunk_id)
            length = stored_length(size)
            if length is not None:
                self.lengths[chunk_id] = length
        self.sized |= found
        return found

    def lengths_of(self, ids: set[int]) -> dict[int, int]:
        """The index's lengths of passages, those not read with their terms read now (a
        passage without one is left out: it counts as of the mean length)."""
        missing = sorted(ids - self.sized)
        if missing:
            self.lengths.update(index_lengths(self.search.db, missing))
            self.sized.update(missing)
        return self.lengths


def plain(term: str) -> bool:
    """Whether a quoted term is found by the word index alone: no phrase to check on the
    text (``positions``), no Chinese or Japanese (``cjk.route``)."""
    return not has_cjk(term) and not positions.needs_positions(term)


def chosen(seen: Seen, terms: list[str], every: bool) -> set[int]:
    """The passages holding every term (or any), each term's passages kept in ``seen``.
    Every term of plain words: one query for the passages that hold them all, and only
    how many hold each (its weight): reading each one's passages took 8 ms for "and",
    "or" and "not" at 50 books."""
    db = seen.search.db
    if every and all(plain(t) for t in terms) and any(t not in seen.sets for t in terms):
        return seen.matching(" AND ".join(terms))
    for term in terms:
        if term in seen.sets:
            continue
        if plain(term):
            seen.sets[term] = seen.matching(term)
        else:
            sql, match = route(ALL_MATCHING, term)
            rows = positions.execute(db, sql, (match,), seen.texts)
            seen.sets[term] = {int(r[0]) for r in rows}
    held = [seen.sets[t] for t in terms]
    return set.intersection(*held) if every else set.union(*held)


def once_scores(
    chosen: set[int],
    terms: list[str],
    sets: dict[str, set[int]] | None,
    weight: dict[str, float],
    sizes: tuple[dict[int, int], float],
) -> dict[int, float]:
    """Each chosen passage's BM25 with each term it holds counted once, for its length:
    ``once_bm25`` of its terms' summed weight (every term's, when ``sets`` is None: the
    passages hold every term), worked out once for each weight and length."""
    lengths, mean = sizes
    every = sum(weight[t] for t in terms)
    known: dict[tuple[float, float], float] = {}
    score: dict[int, float] = {}
    for c in chosen:
        held = every if sets is None else sum(weight[t] for t in terms if c in sets[t])
        size = lengths.get(c, mean)
        value = known.get((held, size))
        if value is None:
            value = known[(held, size)] = once_bm25(held, size, mean)
        score[c] = value
    return score


def recount(
    seen: Seen,
    terms: list[str],
    sets: dict[str, set[int]] | None,
    score: dict[int, float],
    figures: Figures,
    top: list[int],
) -> None:
    """Score the passages ``top`` again with their words counted in their text as FTS5
    counts them (``positions.word_counts``; a phrase by its first word); ``sets`` as
    ``once_scores``."""
    if not top:
        return
    words = {t: t.strip('"').replace('""', '"') for t in terms}
    counts = positions.word_counts(seen.texts(top), list(words.values()))
    for c in top:
        score[c] = counted(c, sets, figures, counts.get(c, {}), words)


def counted(
    c: int,
    sets: dict[str, set[int]] | None,
    figures: Figures,
    found: dict[str, int],
    words: dict[str, str],
) -> float:
    """A passage's BM25 with each of its terms (``words``: term → its word) counted
    ``found`` times (once when not told)."""
    weight, lengths, mean = figures
    return sum(
        once_bm25(weight[t], lengths.get(c, mean), mean, max(1, found.get(w, 1)))
        for t, w in words.items()
        if sets is None or c in sets[t]
    )


def pool_holds(
    terms: list[str],
    sets: dict[str, set[int]] | None,
    score: dict[int, float],
    figures: Figures,
    parts: tuple[list[int], list[int], list[int]],
) -> bool:
    """Whether the best passages by their terms counted once (the pool) are the best ones
    after the first of them (``top``) are scored again, without counting the words of
    those of them that no reader's bound lets show (``left``): those are never shown, and
    they only matter if they could leave the pool. A recount counts each word at least
    once, so no passage scores less than with every count 1 (worked out here, as the
    recount does it: a sum of floats may differ from the summed weight's score in its last
    bit); a passage outside the pool keeps its score. So the pool holds when each passage
    re-scored, and each left out with its counts at 1, still ranks before the first
    passage outside it (``after``, none when every passage is in the pool)."""
    left, top, after = parts
    if not after:
        return True
    first = (-score[after[0]], after[0])
    words = {t: t.strip('"').replace('""', '"') for t in terms}
    lowest = {c: counted(c, sets, figures, {}, words) for c in left}
    return all((-lowest.get(c, score[c]), c) < first for c in top)
