"""Search across the whole library (``margin search --all``, the window's library search).

BM25 over the whole index: one FTS5 query ranked inside the index, passages with every word of
the query first, then with some; each book's reading bound (``read_to``, none once the book is
finished) applies unless the reader asks for whole books; front matter never counts.

Speed: ranking costs FTS5 about a microsecond for every passage that matches, so a query
whose words are in most of the library (tens of thousands of passages) would take tens of
milliseconds. Counting the matches first costs a few hundredths of that; past
``RANKED_MAX`` matches the books come in the library's own order (last opened, else last
added, first), each with its first passages that hold the words: when a word is everywhere,
no passage is much more about it than another, and the books in hand come first.
"""

from __future__ import annotations

import bisect
import sqlite3
import sys
import zlib
from typing import TYPE_CHECKING, Any

from core.search import positions
from core.search.cjk import route
from core.search.frontmatter import is_front_matter
from core.search.library_rank import (
    Chunks,
    Seen,
    best_once,
    chosen,
    plain,
    pool_holds,
    recount,
    shortest,
)
from core.search.query import MATCHING, opening, query_terms
from core.search.rows import idf, index_averages
from core.search.snippets import make_snippet, query_stems

if TYPE_CHECKING:
    from core.errors import MarginError
    from core.search.hits import SearchHit

LIBRARY_POOL = 300  # best chunks of the whole library ranked before grouping by book
RECOUNT = 150  # of them, those scored again on their words counted in their text
SPARE = 2  # passages beyond per_book taken in book order, for front matter left out
RANKED_MAX = 8000  # matching passages FTS5 ranks within a few milliseconds (bench_search.py)
# counted up to one past RANKED_MAX: more is more (the index without positions reads every
# match's entry: 17,000 passages of a word in 500 books took 10 ms)
COUNT = (
    "SELECT count(*) FROM (SELECT 1 FROM chunk_index WHERE chunk_index MATCH ? "
    f"LIMIT {RANKED_MAX + 1})"
)
KEPT = (
    "SELECT c.id, c.book_id FROM chunk c JOIN book b ON b.id = c.book_id WHERE c.id IN ({}) "
    "AND b.status = 'ready' AND (? = 0 OR b.finished OR c.end_page <= b.read_to)"
)
IN_HAND = (
    "SELECT id, CASE WHEN ? = 0 OR finished THEN NULL ELSE read_to END FROM book "
    "WHERE status = 'ready' ORDER BY coalesce(opened_at, added_at) DESC, id DESC"
)

Found = dict[int, list[tuple[int, float]]]
Passage = tuple[tuple[Any, ...], str, float]  # (chunk row as ``rows.chunk_rows``, snippet, score)


def _errors() -> tuple[type[Exception], ...]:
    """What a failed query raises: ``sqlite3``'s error, or peewee's when the database is
    peewee's (this module runs without peewee for the read-only ``margin search --all``)."""
    peewee = sys.modules.get("peewee")
    return (sqlite3.OperationalError, *((peewee.OperationalError,) if peewee else ()))


def _failed(exc: Exception, book_id: int | None) -> MarginError:
    from core.search.hits import search_failed

    return search_failed(exc, book_id)


def search_library(
    search: Chunks, query: str, *, per_book: int = 3, books: int = 20, bounded: bool = True
) -> list[tuple[int, list[SearchHit]]]:
    """Where the library speaks of ``query``: (book id, its best passages), the book with the
    best passage first, at most ``books`` books and ``per_book`` passages each."""
    from core.search.hits import make_hit

    return [
        (book_id, [make_hit(row, snippet, score) for row, snippet, score in passages])
        for book_id, passages in library_passages(
            search, query, per_book=per_book, books=books, bounded=bounded
        )
    ]


def library_passages(
    search: Chunks, query: str, *, per_book: int = 3, books: int = 20, bounded: bool = True
) -> list[tuple[int, list[Passage]]]:
    """``search_library``'s passages as rows (no ``SearchHit``: the read-only command's
    start-up builds no dataclass)."""
    terms = query_terms(query)
    if not terms:
        return []
    strict, loose = " AND ".join(terms), " OR ".join(terms)
    per_book = max(1, min(int(per_book), 20))
    books = max(1, min(int(books), 100))
    found: Found = {}
    seen = Seen(search)
    for expression, every in [(strict, True)] + ([(loose, False)] if loose != strict else []):
        if positions.needs_positions(expression):
            count = len(_chosen(seen, terms, every))
        else:
            count = _count(search, expression)
            if len(terms) == 1 and count <= RANKED_MAX:  # the word's own count (its weight)
                seen.counts[terms[0]] = count
        if count <= RANKED_MAX:
            _gather(seen, terms, every, found, (per_book, books), bounded)
        else:
            _in_hand(seen, expression, found, per_book, books, bounded)
        if len(found) >= books:
            break
    ids = [c for hits in found.values() for c, _ in hits]
    if not ids:
        return []
    scores = {c: score for hits in found.values() for c, score in hits}
    unreadable: tuple[type[Exception], ...] = (*_errors(), ValueError, zlib.error)
    try:
        rows = seen.rows(ids)
    except unreadable as exc:
        raise _failed(exc, None) from exc
    wanted = query_stems(terms)
    grouped = []
    for book_id, hits in found.items():
        shown = [c for c, _ in hits if c in rows and not is_front_matter(rows[c][5])]
        kept = [
            (rows[c], make_snippet(rows[c][5], wanted) or opening(rows[c][5]), scores[c])
            for c in shown[:per_book]  # a snippet only for what is shown (each ~0.1 ms)
        ]
        if kept:
            grouped.append((book_id, kept))
    return grouped


def _count(search: Chunks, expression: str) -> int:
    try:
        sql, match = route(COUNT, expression)
        rows = positions.execute(search.db, sql, (match,), positions.chunk_texts(search.db))
    except _errors() as exc:
        raise _failed(exc, None) from exc
    return int(rows[0][0]) if rows else 0


def _gather(
    seen: Seen,
    terms: list[str],
    every: bool,
    found: Found,
    sizes: tuple[int, int],
    bounded: bool,
) -> None:
    """Add the best chunks holding ``terms`` (``every`` one, or any) to ``found`` (book id →
    (chunk, score)), ranked over the whole library, within each book's bound; ``sizes``:
    passages per book, books. The index keeps no counts of a word in a passage (issue 41;
    FTS5's own ranking would read and cut every matching passage again, about 70 µs
    each): the chunks are ranked by BM25 with each term counted once, for their length,
    with FTS5's weights (its passage counts) and lengths (``rows.index_lengths``); of the
    ``LIBRARY_POOL`` best, the first ``RECOUNT`` that a reader's bound lets show are scored
    again on their words counted in their text (``library_rank``: the others are never
    shown, and the pool is the same unless ``pool_holds`` says it may not be: then every
    one of the first ``RECOUNT`` is, as before search8)."""
    from heapq import nsmallest  # (here: the read-only command's start-up is measured)

    per_book, books = sizes
    search = seen.search
    try:
        # a query of plain words, each in every passage: the shortest are the best
        short = shortest(seen, terms, LIBRARY_POOL + 1) if every and _plain(terms) else None
        found_in = set(short) if short is not None else _chosen(seen, terms, every)
        lengths = short if short is not None else seen.lengths_of(found_in)
        total, tokens = index_averages(search.db)
        weight = {t: idf(total, seen.count(t)) for t in terms}
        mean = tokens / total if total else 1.0
        sets = None if every else seen.sets  # (None: every passage holds every term)
        figures = (weight, lengths, mean)
        # the best by their terms counted once, and the one after them (``pool_holds``)
        ranked, score = best_once(found_in, terms, sets, figures, LIBRARY_POOL + 1)
        pool, after = ranked[:LIBRARY_POOL], ranked[LIBRARY_POOL:]
        books_of = _kept(search, pool, bounded)
        top = pool[:RECOUNT]
        recount(seen, terms, sets, score, figures, [c for c in top if c in books_of])
        left = [c for c in top if c not in books_of]
        if left and not pool_holds(terms, sets, score, figures, (left, top, after)):
            # scored in full, as when every one is re-scored: the best may differ
            if short is not None:  # every passage holding the words, with its length
                found_in = _chosen(seen, terms, every)
                lengths.update(seen.lengths_of(found_in))
            score = {**best_once(found_in, terms, sets, figures, len(found_in))[1], **score}
            recount(seen, terms, sets, score, figures, left)
            pool = nsmallest(LIBRARY_POOL, score, key=lambda c: (-score[c], c))
            books_of = _kept(search, pool, bounded)
    except _errors() as exc:
        raise _failed(exc, None) from exc
    for chunk_id in sorted(pool, key=lambda c: (-score[c], c)):
        if chunk_id in books_of:
            _add(found, books_of[chunk_id], chunk_id, score[chunk_id], per_book, books)


def _kept(search: Chunks, ids: list[int], bounded: bool) -> dict[int, int]:
    """Passage → its book, for the passages of ``ids`` a search may show: of books ready to
    read, within each one's reading bound when ``bounded``."""
    if not ids:
        return {}
    rows = search.db.execute_sql(
        KEPT.format(",".join(str(c) for c in ids)), (1 if bounded else 0,)
    ).fetchall()
    return {int(c): int(b) for c, b in rows}


def _plain(terms: list[str]) -> bool:
    return all(plain(t) for t in terms)


def _chosen(seen: Seen, terms: list[str], every: bool) -> set[int]:
    """The passages holding every term (or any) (``library_rank.chosen``)."""
    try:
        return chosen(seen, terms, every)
    except _errors() as exc:
        raise _failed(exc, None) from exc


def _in_hand(
    seen: Seen, expression: str, found: Found, per_book: int, books: int, bounded: bool
) -> None:
    """Add, for a query that matches most of the library, the books in the library's order
    (last opened, else last added, first) with their first passages that match, within each
    book's bound. The index without positions finds a rowid by reading its word's entries
    from the first (0.4 ms for a book added last among 500), so the books are read in
    groups: one FTS5 query over each run of neighbouring books, its passages shared out."""
    search = seen.search
    try:
        shelf = search.db.execute_sql(IN_HAND, (1 if bounded else 0,)).fetchall()
        waiting: list[tuple[int, tuple[int, int]]] = []
        for book_id, bound in shelf:
            if len(found) + len(waiting) >= 2 * books:
                _share_out(seen, expression, waiting, found, per_book, books)
                waiting = []
            if len(found) >= books:
                return
            if int(book_id) in found and len(found[int(book_id)]) >= per_book:
                continue
            rowids = search.chunk_range(int(book_id), None if bound is None else int(bound))
            if rowids is not None:
                waiting.append((int(book_id), rowids))
        _share_out(seen, expression, waiting, found, per_book, books)
    except _errors() as exc:
        raise _failed(exc, None) from exc


GROUP_GAP = 2000  # passages between two books' ranges that one query reads past


def _share_out(
    seen: Seen,
    expression: str,
    waiting: list[tuple[int, tuple[int, int]]],
    found: Found,
    per_book: int,
    books: int,
) -> None:
    """``_in_hand`` for ``waiting`` books (in the library's order, each with its rowid
    range): one query for each run of ranges less than ``GROUP_GAP`` apart, then each
    book's first matches, books in their order."""
    ranges = sorted(r for _, r in waiting)
    groups: list[list[int]] = []
    for lo, hi in ranges:
        if groups and lo - groups[-1][1] <= GROUP_GAP:
            groups[-1][1] = max(groups[-1][1], hi)
        else:
            groups.append([lo, hi])
    sql, match = route(MATCHING, expression)
    matched: list[int] = []
    for lo, hi in groups:
        rows = positions.execute(seen.search.db, sql, (match, lo, hi), seen.texts, (lo, hi))
        matched.extend(int(r[0]) for r in rows)
    matched.sort()
    keep = per_book + SPARE  # a few spare: a book's first matches may be its contents
    for book_id, (lo, hi) in waiting:
        at = bisect.bisect_left(matched, lo)
        for chunk_id in matched[at : at + keep]:
            if chunk_id > hi:
                break
            _add(found, book_id, chunk_id, 0.0, keep, books)


def _add(
    found: Found, book_id: int, chunk_id: int, score: float, per_book: int, books: int
) -> None:
    hits = found.get(book_id)
    if hits is None:
        if len(found) >= books:
            return
        hits = found[book_id] = []
    if len(hits) < per_book and all(c != chunk_id for c, _ in hits):
        hits.append((chunk_id, score))


LEFT_OUT = (
    "SELECT DISTINCT c.book_id FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid "
    "JOIN book b ON b.id = c.book_id WHERE chunk_index MATCH ? AND b.status = 'ready' "
    "AND NOT b.finished AND c.end_page > b.read_to"
)


def left_out(search: Chunks, query: str, shown: set[int]) -> int:
    """How many books a search bounded by where the reader has read left out: books that
    match only past their bound (a book not started yet matches only there), not among the
    ``shown`` ones. Told to the reader (never to the model), so that one click can include
    them: a question about a book not yet started must not just find nothing."""
    terms = query_terms(query)
    if not terms:
        return 0
    try:
        rows = positions.execute(
            search.db, LEFT_OUT, (" OR ".join(terms),), positions.chunk_texts(search.db)
        )
    except _errors() as exc:
        raise _failed(exc, None) from exc
    return len({int(r[0]) for r in rows} - shown)
