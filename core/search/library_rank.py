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
SHORTEST = (
    "SELECT chunk_index.rowid, d.sz FROM chunk_index LEFT JOIN chunk_index_docsize d "
    "ON d.id = chunk_index.rowid WHERE chunk_index MATCH ? ORDER BY d.sz, chunk_index.rowid "
    "LIMIT ?"
)


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
        rows = self.search.db.execute_sql(TERM_LENGTHS, (expression,)).fetchall()
        lengths = self.lengths
        for chunk_id, size in rows:  # (a length of one or two bytes read here)
            if size and size[0] < 0x80:
                lengths[chunk_id] = size[0]
            elif size and len(size) == 2 and size[1] < 0x80:
                lengths[chunk_id] = (size[0] & 0x7F) << 7 | size[1]
            else:
                length = stored_length(size)
                if length is not None:
                    lengths[chunk_id] = length
        found = {chunk_id for chunk_id, _ in rows}
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


def shortest(seen: Seen, terms: list[str], n: int) -> dict[int, int] | None:
    """The ``n`` shortest passages that hold every one of ``terms`` (plain ones), the lower
    id first among equals, with their lengths: for such a query, the best by their terms
    counted once (``best_once``: the same weight for each, less for a longer passage).
    SQLite sorts the index's records of lengths byte by byte, which is the order of their
    numbers when each is of one or two bytes (up to 16,383 words); None when one of those
    taken is not (a passage without a length sorts first): then every passage is read
    (``chosen``). Sorted and cut by SQLite: 5,000 passages' lengths read into Python and
    sorted there took 4 ms."""
    rows = seen.search.db.execute_sql(SHORTEST, (" AND ".join(terms), n)).fetchall()
    found: dict[int, int] = {}
    for chunk_id, size in rows:
        if size and len(size) == 1 and size[0] < 0x80:
            found[chunk_id] = size[0]
        elif size and len(size) == 2 and size[0] > 0x80 and size[1] < 0x80:
            found[chunk_id] = (size[0] & 0x7F) << 7 | size[1]
        else:
            return None
    return found


def best_once(
    chosen: set[int],
    terms: list[str],
    sets: dict[str, set[int]] | None,
    figures: Figures,
    n: int,
) -> tuple[list[int], dict[int, float]]:
    """The ``n`` best of the chosen passages by their BM25 with each term they hold counted
    once, for their length (``once_bm25`` of its terms' summed weight: every term's, when
    ``sets`` is None: the passages hold every term), best first (the lower id first among
    equals), and their scores. The passages are grouped by their summed weight and length,
    each group's score worked out once, and only the best groups' passages sorted (a score
    for each of 5,000 passages, and taking the best of them, took 3 ms)."""
    weight, lengths, mean = figures
    groups: dict[tuple[float, float], list[int]] = {}
    if sets is None:
        every = sum(weight[t] for t in terms)
        sized: dict[float, list[int]] = {}
        for c in chosen:
            sized.setdefault(lengths.get(c, mean), []).append(c)
        groups = {(every, size): ids for size, ids in sized.items()}
    else:
        # each passage's terms' weights summed in the terms' order, from 0 (as ``sum``)
        weights: dict[int, float] = dict.fromkeys(chosen, 0)
        for t in terms:
            w = weight[t]
            for c in sets[t]:
                if c in weights:
                    weights[c] += w
        for c, held in weights.items():
            groups.setdefault((held, lengths.get(c, mean)), []).append(c)
    by_score: dict[float, list[int]] = {}
    for (held, size), ids in groups.items():
        by_score.setdefault(once_bm25(held, size, mean), []).extend(ids)
    ranked: list[int] = []
    score: dict[int, float] = {}
    for value in sorted(by_score, reverse=True):
        if len(ranked) >= n:
            break
        taken = sorted(by_score[value])[: n - len(ranked)]
        ranked += taken
        score.update(dict.fromkeys(taken, value))
    return ranked, score


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
