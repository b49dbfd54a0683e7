"""Library search re-scores only the passages a reader's bound lets show (issue 41, search8):
the same books, passages and scores as re-scoring every one of its best (the previous way,
still taken when the pool of best passages could change: ``library_rank.pool_holds``)."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

import pytest

from core.search import BookSearch, everywhere, library_rank, positions
from core.search.cjk import route
from core.search.rows import idf, index_averages, index_lengths, once_bm25
from tests.conftest import BOOKS

QUERIES = ["sister", "Alice", "Gregor", "the Queen of Hearts", "door locked", "father apple"]


@pytest.fixture(scope="module")
def search(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.store.library import Library

    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("recount") / "home"))
    alice = import_book(lib, BOOKS / "alice_in_wonderland.txt").book
    gregor = import_book(lib, BOOKS / "metamorphosis.txt").book
    lib.set_read_to(alice.id, alice.page_count // 2)  # half of Alice's passages left out
    lib.set_read_to(gregor.id, gregor.page_count // 3)
    yield BookSearch(lib.db)
    lib.close()


def _answers(search: BookSearch, bounded: bool) -> list[Any]:
    return [
        [(b, [(h.chunk_id, h.score, h.snippet) for h in hits]) for b, hits in found]
        for found in (search.search_all(q, per_book=3, books=20, bounded=bounded) for q in QUERIES)
    ]


COUNTED_BEFORE: list[int] = []


def _gather_before(
    seen: Any, terms: list[str], every: bool, found: Any, sizes: tuple[int, int], bounded: bool
) -> None:
    """``everywhere._gather`` as it was (search7): the ``RECOUNT`` best passages all scored
    again on their words, then the ``LIBRARY_POOL`` best kept within the bounds."""
    from heapq import nsmallest

    db, sets = seen.search.db, seen.sets
    for term in terms:  # each term's passages, as they were read
        if term not in sets:
            sql, match = route(library_rank.ALL_MATCHING, term)
            rows = positions.execute(db, sql, (match,), seen.texts)
            sets[term] = {int(r[0]) for r in rows}
    held = [sets[t] for t in terms]
    chosen = set.intersection(*held) if every else set.union(*held)
    total, tokens = index_averages(db)
    weight = {t: idf(total, len(rows)) for t, rows in sets.items()}
    lengths = index_lengths(db, sorted(chosen))
    mean = tokens / total if total else 1.0
    score = {
        c: once_bm25(sum(weight[t] for t in terms if c in sets[t]), lengths.get(c, mean), mean)
        for c in chosen
    }
    top = nsmallest(everywhere.RECOUNT, score, key=lambda c: (-score[c], c))
    COUNTED_BEFORE.append(len(top))
    words = {t: t.strip('"').replace('""', '"') for t in terms}
    counts = positions.word_counts(seen.texts(top), list(words.values()))
    for c in top:
        held = counts.get(c, {})
        score[c] = sum(
            once_bm25(weight[t], lengths.get(c, mean), mean, max(1, held.get(w, 1)))
            for t, w in words.items()
            if c in sets[t]
        )
    best = nsmallest(everywhere.LIBRARY_POOL, score, key=lambda c: (-score[c], c))
    ids = ",".join(str(c) for c in best) or "0"
    kept = dict(db.execute_sql(everywhere.KEPT.format(ids), (int(bounded),)).fetchall())
    for c in best:
        if c in kept:
            everywhere._add(found, kept[c], c, score[c], *sizes)


@pytest.mark.parametrize("sizes", [(300, 150), (12, 6), (12, 6, "every one re-scored")])
def test_the_same_answers_as_rescoring_every_best_passage(
    search: BookSearch, monkeypatch: pytest.MonkeyPatch, sizes: tuple[Any, ...]
) -> None:
    monkeypatch.setattr(everywhere, "LIBRARY_POOL", sizes[0])
    monkeypatch.setattr(everywhere, "RECOUNT", sizes[1])
    if len(sizes) > 2:  # the way taken when the pool could change
        monkeypatch.setattr(everywhere, "pool_holds", lambda *args: False)
    counted: list[int] = []
    recount = library_rank.recount

    def counting(*args: Any) -> None:
        counted.append(len(args[-1]))
        recount(*args)

    monkeypatch.setattr(everywhere, "recount", counting)
    now = _answers(search, True)
    counted_now = sum(counted)
    whole = _answers(search, False)
    monkeypatch.setattr(everywhere, "_gather", _gather_before)
    COUNTED_BEFORE.clear()
    assert _answers(search, True) == now
    if len(sizes) == 2:
        assert 0 < counted_now < sum(COUNTED_BEFORE), "the passages left out were counted"
    else:
        assert counted_now == sum(COUNTED_BEFORE)
    assert _answers(search, False) == whole
    assert sum(len(hits) for found in now for _, hits in found) > len(QUERIES)


def test_a_passage_without_its_length_sends_the_search_the_whole_way(
    search: BookSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's record of a passage's length missing (a passage of the mean length for
    the ranking): SQLite's order of lengths cannot tell where it goes (``shortest`` gives
    None), every passage is read, and the answers are still those of the previous way."""
    db = search.db
    first = db.execute_sql(
        "SELECT chunk_index.rowid FROM chunk_index JOIN chunk_index_docsize d "
        "ON d.id = chunk_index.rowid WHERE chunk_index MATCH '\"sister\"' ORDER BY d.sz LIMIT 1"
    ).fetchone()[0]
    size = db.execute_sql("SELECT sz FROM chunk_index_docsize WHERE id = ?", (first,)).fetchone()
    db.execute_sql("DELETE FROM chunk_index_docsize WHERE id = ?", (first,))
    try:
        seen = library_rank.Seen(search)
        assert library_rank.shortest(seen, ['"sister"'], 301) is None
        now = _answers(search, True)
        monkeypatch.setattr(everywhere, "_gather", _gather_before)
        assert _answers(search, True) == now
    finally:
        db.execute_sql("INSERT INTO chunk_index_docsize(id, sz) VALUES (?, ?)", (first, size[0]))


def test_the_pool_holds_only_while_no_passage_left_out_can_fall_out_of_it() -> None:
    """A passage not re-scored keeps its place only if, counted once for each term, it
    still ranks before the first passage outside the pool: a sum of two terms' scores can
    be a last bit below their summed weight's score, and ties between passages are common."""
    terms = ['"queen"', '"hearts"']
    sets = {'"queen"': {1, 2, 3}, '"hearts"': {1, 2, 3}}
    weight = {'"queen"': 3.83, '"hearts"': 4.77}
    lengths = {1: 16, 2: 16, 3: 16}
    figures = (weight, lengths, 100.0)
    once = once_bm25(3.83 + 4.77, 16, 100.0)
    split = once_bm25(3.83, 16, 100.0) + once_bm25(4.77, 16, 100.0)
    assert split < once  # the case: the recount's sum is a last bit lower
    score = {1: once, 2: once, 3: once}
    # passage 2, left out, would rank after passage 3 outside the pool once re-scored
    assert not library_rank.pool_holds(terms, sets, score, figures, ([2], [1, 2], [3]))
    score[3] = once / 2  # a clear step down to the first passage outside the pool
    assert library_rank.pool_holds(terms, sets, score, figures, ([2], [1, 2], [3]))
    assert library_rank.pool_holds(terms, sets, score, figures, ([2], [1, 2], []))


class _Reader:
    """A word index alone, as ``library_rank.Seen`` reads one (``execute_sql``)."""

    def __init__(self, lengths: list[int]) -> None:
        self.connection = sqlite3.connect(":memory:")
        self.connection.execute(
            "CREATE VIRTUAL TABLE chunk_index USING fts5(text, detail=none, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.connection.executemany(
            "INSERT INTO chunk_index(rowid, text) VALUES (?, ?)",
            [(i + 1, "apple " + "pear " * (n - 1)) for i, n in enumerate(lengths)],
        )
        self.db = self

    def execute_sql(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.connection.execute(sql, params)


def test_the_shortest_passages_are_sorted_by_sqlite_as_by_their_lengths() -> None:
    """The index's records of lengths (varints) sort byte by byte as their numbers up to
    16,383 words; a passage without one, or with a longer one, sends the search to read
    every passage (``shortest`` gives None) when it is among those taken."""
    rng = random.Random(2)
    lengths = [rng.choice([1, 2, 90, 127, 128, 129, 200, 255, 256, 300, 1000]) for _ in range(300)]
    reader = _Reader(lengths)
    wanted = sorted(range(1, 301), key=lambda i: (lengths[i - 1], i))
    for n in (1, 40, 120, 301):
        got = library_rank.shortest(library_rank.Seen(reader), ['"apple"'], n)
        assert got is not None and list(got) == wanted[:n]
        assert all(got[i] == lengths[i - 1] for i in got)
    assert library_rank.shortest(library_rank.Seen(reader), ['"apple"', '"pear"'], 300) is not None
    # a record of three bytes (16,384 words) sorts among those of 128 to 255 words
    longest = wanted[-1]
    reader.execute_sql("UPDATE chunk_index_docsize SET sz = x'818000' WHERE id = ?", (longest,))
    assert library_rank.shortest(library_rank.Seen(reader), ['"apple"'], 300) is None
    assert (
        list(library_rank.shortest(library_rank.Seen(reader), ['"apple"'], 40) or [])
        == (wanted[:40])
    )
    reader.execute_sql("DELETE FROM chunk_index_docsize WHERE id = ?", (wanted[100],))
    assert library_rank.shortest(library_rank.Seen(reader), ['"apple"'], 5) is None
