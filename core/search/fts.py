"""BM25 search over the FTS5 index of a book's chunks.

Any text a person types is a valid query: it is turned into quoted FTS5 terms, so operators
(AND, NEAR, *, parentheses, colons) are just words and never a syntax error. Text inside
double quotes stays a phrase. All terms must match first; when nothing does, any term may
(natural-language questions still find passages); passages with every term come first and
passages with only some of them fill the remaining places. The reader's page bound is a SQL
condition, so the best passages before that page are found, not the best few filtered
afterwards.

Speed: FTS5 MATCH would rank every matching chunk of the whole library before a ``book_id``
filter. A book's chunks are written in one transaction, so their ids are contiguous and in
page order: the query is restricted to the book's rowid range (ending at the last chunk
within the bound) inside the FTS5 query itself, ranked there, and snippets are built for the
few top hits only.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import re
import sqlite3
import zlib
from typing import Any

import peewee as pw

from core.labels import QUOTE_CLOSE, QUOTE_OPEN
from core.search import cjk, positions
from core.search.everywhere import left_out, search_library
from core.search.frontmatter import is_front_matter
from core.search.hits import (
    MATCHING,
    PHRASE,
    SearchHit,
    opening,
    query_terms,
    search_failed,
)
from core.search.ranking import (
    bm25,
    dense_ranking,
    fuse,
    fuse_equal,
    merge_neighbours,
    rerank,
)
from core.search.rows import (
    chunk_range,
    chunk_rows,
    idf,
    index_averages,
    index_lengths,
    once_bm25,
)
from core.search.sentence_vectors import SentenceVectors
from core.search.snippets import make_snippet, query_stems
from core.search.vector_indexer import request_vectors, want
from core.search.vectors import BookVectors

MARK_START = QUOTE_OPEN
MARK_END = QUOTE_CLOSE
POOL = 30  # candidates from each ranking before fusion
DEEP_POOL = 60  # candidates of the words and of the sentence encoder (``deep``)
# a word in at least this share of the searched chunks (a main character's name) is left out
# of the sentence encoder's query: it tells no chunk from another, yet the encoder ranked by it
# ("What has Gregor become when he wakes up?": the chunk saying "vermin" 30th, 5th without it).
# eval_search.py deep: 110/132 at 0.6 and 0.7 as without it; 0.5 lost one ("Alice" left out)
COMMON_SHARE = 0.6
RERANK = 45  # fused candidates re-ranked by closeness
BM25_DEPTH = 1.0  # chunks counted for BM25, times the pool (``_ranked_bm25``; eval_search.py)
COUNT = "SELECT count(*) FROM chunk_index WHERE chunk_index MATCH ?"
ALONE_DEPTH = 8.0  # the same without vectors: chunks read, times the pool (``_ranked_alone``)
DEEP_BM25_DEPTH = 2.0  # the same for the answers' search (one more question found)


_WORD = re.compile(r"\w+", re.UNICODE)


def _first_word(word: str) -> str:
    """The first run of word characters of ``word``, lower case ("Gregor's" → "gregor")."""
    found = _WORD.search(word)
    return found.group().lower() if found else ""


def _matching(term: str, rowids: tuple[int, int]) -> tuple[str, tuple[Any, ...]]:
    sql, match = cjk.route(MATCHING, term)
    return sql, (match, *rowids)


class BookSearch:
    """Full-text search over the library database it is given."""

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db
        self.vectors = BookVectors(db)
        self.sentences = SentenceVectors(db)

    def chunk_range(self, book_id: int, until_page: int | None = None) -> tuple[int, int] | None:
        """The first and last chunk id of a book (the last within ``until_page``)."""
        return chunk_range(self.db, book_id, until_page)

    def _hits(
        self,
        ids: list[int],
        book_id: int,
        snippets: dict[int, str],
        scores: dict[int, float],
        known: dict[int, tuple[Any, ...]] | None = None,
    ) -> list[SearchHit]:
        """The chunks ``ids`` of the book as hits, in the order given (rows already read,
        ``known``, are not read again)."""
        if not ids:
            return []
        known = known or {}
        try:
            missing = [c for c in ids if c not in known]
            rows = {**known, **self._rows(missing, book_id)} if missing else known
        except (sqlite3.OperationalError, pw.OperationalError, ValueError, zlib.error) as exc:
            raise search_failed(exc, book_id) from exc
        hits = []
        for chunk_id in ids:
            row = rows.get(chunk_id)
            if row is None:
                continue
            hits.append(
                SearchHit(
                    chunk_id=row[0],
                    book_id=row[1],
                    start_page=row[2],
                    end_page=row[3],
                    chapter=row[4],
                    text=row[5],
                    snippet=snippets.get(chunk_id, ""),
                    score=scores.get(chunk_id, 0.0),
                )
            )
        return hits

    def _texts(self, book_id: int | None) -> positions.Texts:
        """Reads passages' text for a phrase's check (``positions``), through the cache."""
        return lambda ids: {c: str(row[5]) for c, row in self._rows(ids, book_id).items()}

    def _matching(self, term: str, rowids: tuple[int, int], book_id: int | None) -> list[Any]:
        """The ids of the chunks in ``rowids`` that ``term`` (a word or a phrase) matches."""
        sql, params = _matching(term, rowids)
        return positions.execute(self.db, sql, params, self._texts(book_id), rowids)

    def _rows(self, ids: list[int], book_id: int | None) -> dict[int, tuple[Any, ...]]:
        """(id, book, first page, last page, chapter, text) of chunks (of one book, unless
        ``book_id`` is None) (``rows.chunk_rows``)."""
        return chunk_rows(self.db, ids, book_id)

    def _ranked_alone(
        self,
        terms: list[str],
        rowids: tuple[int, int],
        book_id: int,
        pool: int,
        read: dict[int, tuple[Any, ...]],
    ) -> tuple[list[tuple[int, float]], set[int]]:
        """FTS5's BM25 ranking without the book's vectors (none yet, or a quoted phrase): the
        ``pool`` best chunks, those with every term first, and the chunks with every term.
        The index keeps no counts of a word in a passage (issue 41: FTS5's bm25() would read
        and cut every matching passage again, 50 ms for a common word in one book): the
        ``ALONE_DEPTH`` × ``pool`` chunks best for their terms counted once are read, and
        their words counted as FTS5 counts them (``positions.word_counts``; a phrase by its
        first word), with FTS5's weights and lengths (``rows.index_averages``). The rows read
        are added to ``read``."""
        score, held, _, every = self._held(terms, rowids, book_id)
        if not score:
            return [], every
        try:
            total, tokens = index_averages(self.db)
            weight = {t: idf(total, self._library_count(t)) for t in terms}
            lengths = index_lengths(self.db, list(score))
        except (sqlite3.OperationalError, pw.OperationalError) as exc:
            raise search_failed(exc, book_id) from exc
        mean = tokens / total if total else 1.0

        def bm25_of(c: int, counts: dict[str, int] | None = None) -> float:
            size = lengths.get(c, mean)
            return sum(
                once_bm25(weight[t], size, mean, max(1, (counts or {}).get(t, 1))) for t in held[c]
            )

        counted = heapq.nlargest(
            int(ALONE_DEPTH * pool), score, key=lambda c: (c in every, bm25_of(c), -c)
        )
        try:
            rows = self._rows(sorted(counted), book_id)
        except (sqlite3.OperationalError, pw.OperationalError, ValueError, zlib.error) as exc:
            raise search_failed(exc, book_id) from exc
        read.update(rows)
        words = {t: t.strip('"').replace('""', '"') for t in terms}
        found = positions.word_counts({c: str(r[5]) for c, r in rows.items()}, list(words.values()))
        scored = {
            c: bm25_of(c, {t: found.get(c, {}).get(w, 1) for t, w in words.items()})
            for c in counted
        }
        best = heapq.nlargest(pool, scored, key=lambda c: (c in every, scored[c], -c))
        return [(c, scored[c]) for c in best], every

    def _library_count(self, term: str) -> int:
        """How many passages of the whole library hold ``term`` (FTS5's count for its
        weight; a phrase's words, unchecked)."""
        sql, match = cjk.route(COUNT, positions.loosen(term))
        row = self.db.execute_sql(sql, (match,)).fetchone()
        return int(row[0]) if row else 0

    def _held(
        self, terms: list[str], rowids: tuple[int, int], book_id: int
    ) -> tuple[dict[int, float], dict[int, list[str]], dict[str, float], set[int]]:
        """Per chunk in ``rowids`` holding a term: the sum of its terms' weights in the book,
        and which terms it holds; each term's weight; the chunks holding every term."""
        total = rowids[1] - rowids[0] + 1
        score: dict[int, float] = {}
        held: dict[int, list[str]] = {}
        weight: dict[str, float] = {}
        every: set[int] | None = None
        for term in terms:
            try:
                rows = self._matching(term, rowids, book_id)
            except (sqlite3.OperationalError, pw.OperationalError) as exc:
                raise search_failed(exc, book_id) from exc
            chunks = {int(r[0]) for r in rows}
            every = chunks if every is None else every & chunks
            weight[term] = math.log(1 + (total - len(chunks) + 0.5) / (len(chunks) + 0.5))
            for chunk_id in chunks:
                score[chunk_id] = score.get(chunk_id, 0.0) + weight[term]
                held.setdefault(chunk_id, []).append(term)
        return score, held, weight, every or set()

    def _ranked_bm25(
        self,
        terms: list[str],
        rowids: tuple[int, int],
        book_id: int,
        cosines: tuple[int, Any],
        pool: int,
        depth: float = BM25_DEPTH,
        read: dict[int, tuple[Any, ...]] | None = None,
        also: list[int] | None = None,
    ) -> tuple[list[tuple[int, float]], set[int]]:
        """The ``pool`` best chunks in ``rowids`` by Okapi BM25 with the book's own term
        weights (``ranking.bm25``: how often a chunk holds each term, for its length), ties
        broken by closeness in meaning. Only the ``depth`` × ``pool`` chunks with the most
        weight of terms (summed) are read and counted (eval_search.py: as many
        questions found as when every chunk is). The rows read, with those of the chunks
        ``also`` (the dense ranking's, in the same query), are added to ``read``."""
        score, held, weight, every = self._held(terms, rowids, book_id)
        first, values = cosines
        counted = heapq.nlargest(
            int(depth * pool), score, key=lambda c: (score[c], float(values[c - first]))
        )
        if not counted:
            return [], every
        try:
            rows = self._rows(sorted({*counted, *(also or ())}), book_id)
        except (sqlite3.OperationalError, pw.OperationalError, ValueError, zlib.error) as exc:
            raise search_failed(exc, book_id) from exc
        if read is not None:
            read.update(rows)
        texts = {c: str(row[5]) for c, row in rows.items()}
        scored = bm25(texts, {c: held[c] for c in counted if c in texts}, weight)
        best = heapq.nlargest(pool, scored, key=lambda c: (scored[c], float(values[c - first])))
        return [(c, scored[c]) for c in best], every

    def search_book(
        self,
        book_id: int,
        query: str,
        *,
        limit: int = 5,
        until_page: int | None = None,
        hybrid: bool = True,
        deep: bool = False,
    ) -> list[SearchHit]:
        """Best passages of one book for ``query``, best first; only passages ending on or
        before ``until_page`` when it is given. Empty or punctuation-only queries give no
        hits, and neither does front matter (contents, title, licence).

        BM25 ranks passages with every word of the query first, then passages with some.
        ``hybrid`` (unless the query quotes a phrase): the chunks nearest in meaning
        (``core.search.vectors``) join them by reciprocal rank fusion, and the best few are
        re-ranked by how closely the query's telling words gather in two sentences
        (``rerank``). A book without vectors yet is searched by BM25 alone (and asks for its
        vectors). Neighbouring chunks among the best are merged into one passage.

        ``deep`` (for answers: the agent's tool, passages mode): when the book has the
        sentence encoder's vectors, the words' ranking and the encoder's are fused instead
        (``fuse_equal``); the question's own vector costs 10-60 ms, too slow for Find."""
        limit = max(1, min(int(limit), 100))
        terms = query_terms(query)
        if not terms:
            return []
        rowids = self.chunk_range(book_id, until_page)
        if rowids is None:
            return []
        # a "quoted phrase" asks for those very words, and so does a word or two that many
        # passages hold (a name, a term): meaning joins in for questions and descriptions
        hybrid = hybrid and not PHRASE.search(query)
        if hybrid and deep:
            deep_hits = self._deep(book_id, query, terms, rowids, limit)
            if deep_hits is not None:
                return self._finished(deep_hits, terms, limit)
        pool = max(POOL, limit * 3) if hybrid else limit * 2 + 4
        cosines = self.vectors.cosines(book_id, query, rowids) if hybrid else None
        read: dict[int, tuple[Any, ...]] = {}  # chunk rows read while ranking
        near: list[tuple[int, float]] = []
        if cosines is not None:
            near = dense_ranking(cosines, rowids, pool)
            keyword, every = self._ranked_bm25(
                terms, rowids, book_id, cosines, pool, read=read, also=[c for c, _ in near]
            )
        else:
            keyword, every = self._ranked_alone(terms, rowids, book_id, pool, read)
        if hybrid and len(terms) < 3 and len(every) >= pool:
            hybrid = False
            keyword = keyword[: limit * 2 + 4]
        if not keyword:
            return []  # not one word of the query is in the book: nothing near it in meaning
        dense = near if hybrid and cosines is not None else None  # as dense_ranking gives it
        if hybrid and dense is None:
            request_vectors(self.db)  # a book from before vectors, or just imported
        scores = dict(keyword)
        if dense is None:
            ranked = [c for c, _ in keyword]
            hits = self._hits(ranked, book_id, {}, scores, read)
        else:
            fused = fuse([c for c, _ in keyword], [c for c, _ in dense])[: max(RERANK, limit * 2)]
            candidates = self._hits(fused, book_id, {}, scores, read)
            hits = rerank(query, candidates, [c for c, _ in keyword], [c for c, _ in dense])
        # passages with every word of the query stay first (the reader's own words)
        hits = [h for h in hits if h.chunk_id in every] + [
            h for h in hits if h.chunk_id not in every
        ]
        return self._finished(hits, terms, limit)

    def _finished(self, hits: list[SearchHit], terms: list[str], limit: int) -> list[SearchHit]:
        """The first ``limit`` passages of ranked ``hits`` (neighbours merged, no front
        matter), each with its snippet."""
        chosen = merge_neighbours(hits, limit, keep=lambda h: not is_front_matter(h.text))
        wanted = query_stems(terms)
        return [
            dataclasses.replace(h, snippet=make_snippet(h.text, wanted) or opening(h.text))
            for h in chosen
        ]

    def _deep(
        self, book_id: int, query: str, terms: list[str], rowids: tuple[int, int], limit: int
    ) -> list[SearchHit] | None:
        """The chunks ranked by the fusion of the words' ranking and the sentence
        encoder's; None when the book has no encoder vectors (yet: they are asked for)."""
        meaning = self.sentences.cosines(book_id, self._telling(query, terms, rowids), rowids)
        if meaning is None:
            if self.sentences.available():
                want(self.db, book_id)
            return None
        pool = max(DEEP_POOL, limit * 3)
        read: dict[int, tuple[Any, ...]] = {}
        dense = dense_ranking(meaning, rowids, pool)
        keyword, _ = self._ranked_bm25(
            terms, rowids, book_id, meaning, pool, DEEP_BM25_DEPTH, read, [c for c, _ in dense]
        )
        if not keyword:
            return []  # not one word of the query is in the book
        fused = fuse_equal([c for c, _ in keyword], [c for c, _ in dense])
        hits = self._hits(fused[: max(RERANK, limit * 3)], book_id, {}, dict(keyword), read)
        from core.search import answer_rerank  # a deep search's, not every command's start-up

        return answer_rerank.rerank(query, hits)  # off unless asked for (answer_rerank.py)

    def _telling(self, query: str, terms: list[str], rowids: tuple[int, int]) -> str:
        """``query`` without the words that most searched chunks hold (``COMMON_SHARE``), for
        the sentence encoder; ``query`` itself when nothing else would be left."""
        total = rowids[1] - rowids[0] + 1
        common = set()
        for term in terms:
            try:
                count = len(self._matching(term, rowids, None))
            except (sqlite3.OperationalError, pw.OperationalError):
                continue  # the words' own ranking reports a broken index
            if count >= COMMON_SHARE * total:
                common.add(term.strip('"').lower())
        if not common:
            return query
        kept = [w for w in query.split() if _first_word(w) not in common]
        return " ".join(kept) if any(_first_word(w) for w in kept) else query

    def continues_beyond(self, book_id: int, until_page: int) -> bool:
        """Whether the book has text after ``until_page`` (never how much matches a query:
        a count tied to the query would tell the model whether a phrase occurs later)."""
        row = self.db.execute_sql(
            "SELECT 1 FROM chunk WHERE book_id = ? AND end_page > ? LIMIT 1", (book_id, until_page)
        ).fetchone()
        return row is not None

    def search_all(
        self, query: str, *, per_book: int = 3, books: int = 20, bounded: bool = True
    ) -> list[tuple[int, list[SearchHit]]]:
        """Where the library speaks of ``query`` (``core.search.everywhere``): (book id, its
        best passages), at most ``books`` books and ``per_book`` passages each, within each
        book's reading bound unless ``bounded`` is False."""
        return search_library(self, query, per_book=per_book, books=books, bounded=bounded)

    def left_out(self, query: str, shown: set[int]) -> int:
        """Books a bounded ``search_all`` left out: they match only past where the reader
        has read (``core.search.everywhere.left_out``)."""
        return left_out(self, query, shown)
