"""Per book, for the spoiler check: which word stems are distinctive and where each first
appears (``SpoilerIndex``), with the FTS5 look-ups the check makes on the search index
(phrases, words near each other, the passages that best match a sentence, within the bound or
after it). ``SpoilerIndexCache`` keeps a few.
"""

from __future__ import annotations

import heapq
import math
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

import peewee as pw

from core.agent import spoiler_stats
from core.agent.spoiler_text import _EXTRA_COMMON, _STEMMER, _WORD, GENERAL_ZIPF, visible_text
from core.search import positions
from core.search.cjk import route
from core.search.query import MATCHING
from core.search.rows import idf, index_averages, index_lengths, once_bm25

# Thresholds (see the module docstring and tests/core/agent/spoiler_eval.py).
RARE_ZIPF = 3.0  # below this general frequency a word is rare (not in spoiler_words at all)
KEYNESS = 1.2  # log10 of how many times more often the book uses a word than English does
MIN_KEY_COUNT = 3  # a key word is used at least this often in the book
NAME_SHARE = 0.8  # a name is capitalised at least this often ...
MIN_NAME_COUNT = 2  # ... and used at least this often
MIN_LENGTH = 3  # shorter words never count (initials, "Mr", roman numerals)
MOTIF_COUNT = 3  # a word the book comes back to this often ...
MOTIF_ZIPF = 4.5  # ... and not among the most common English words
PLAIN_ZIPF = 5.8  # less common words may count in pairs: two that the book uses close together
NEAR = 20  # ... within this many words of each other, and only after the bound
MAX_PAIR_WORDS = 6  # pairs are looked for among at most this many words of a sentence
MIN_KNOWN_FOR_PAIRS = 500  # ... and only once the reader has met this many different words:
# at the very start of a book nearly every ordinary word is "new", so a pair of them says
# nothing ("Answered after a short wait" on page 1 is no spoiler)
PHRASE_ZIPF = 6.0  # phrases: two words ("tea party") or "X of Y" ("pack of cards"), each
MIN_PHRASE_COUNT = 3  # ... less common than "the", that the book has in this many passages
SUPPORT_PASSAGES = 4  # the passages within the bound that best match a sentence
RANK_DEPTH = 25  # passages read and counted, times those asked for (``passage_ids``)
COUNT = "SELECT count(*) FROM chunk_index WHERE chunk_index MATCH ?"
CACHED_RANKINGS = 2000  # passage rankings kept per book (``passage_ids``)
CACHED_IDS = 500_000  # passage ids of words kept per book (``passage_ids``): 4 MB
CACHED_TEXTS = 3000  # passages' text kept per book for the checks on it (about 4 MB)


@dataclass(frozen=True)
class SpoilerIndex:
    """Per book: where each word stem first appears and whether it is distinctive. Immutable,
    safe to share between answers and threads."""

    book_id: int
    page_count: int
    first_page: dict[str, int] = field(repr=False)
    count: dict[str, int] = field(repr=False)
    distinctive: frozenset[str] = field(repr=False)
    db: pw.SqliteDatabase | None = field(default=None, repr=False)
    chunk_ids: tuple[int, int] = (0, -1)  # the book's chunk ids (FTS rowids), first and last
    contents_pages: frozenset[int] = frozenset()  # front pages that list chapter titles
    known: frozenset[str] = frozenset()  # stems of the book's title and author: always known
    # distinctive only as motifs (ordinary English words the book comes back to): weaker
    # evidence, that a model's verification may overrule (``Segment.doubtful``)
    motifs: frozenset[str] = field(default=frozenset(), repr=False)
    # word forms the book writes as names (lower case) -> the first page where the book
    # writes any name of the same stem: "belle" -> 44 in A Christmas Carol, though "bells"
    # (stem "bell") ring from p. 13 (``spoiler_stats.BookStats.names``)
    name_forms: dict[str, int] = field(default_factory=dict, repr=False)
    _near: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)
    _phrases: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    _passage_stems: dict[int, frozenset[str]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _pages: dict[int, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    # for ``passage_ids``: words counted per passage, the passages on each side of a bound
    _lengths: dict[int, int] = field(default_factory=dict, compare=False, repr=False)
    _counts: dict[tuple[int, str], int] = field(default_factory=dict, compare=False, repr=False)
    # a word's passages in this book and its weight, for the library's passage count when
    # asked: a sentence and the prefixes checked while it was written share their words
    _matches: dict[tuple[str, int], tuple[array[int], float]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _ranked: dict[tuple[tuple[str, ...], int, bool, int, int], tuple[int, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _text_cache: dict[int, str] = field(default_factory=dict, compare=False, repr=False)
    _sides: dict[tuple[int, bool], frozenset[int]] = field(
        default_factory=dict, compare=False, repr=False
    )
    # per bound, what the disguise check matches against (``spoiler_disguise.LaterWords``)
    _disguise: dict[int, object] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, db: pw.SqliteDatabase, book_id: int) -> SpoilerIndex:
        """The book's word statistics, stored in the library the first time (reading the
        whole book: about 0.2 s for 3 MB of text) and read back from there afterwards, in
        every process. Cache the result (``SpoilerIndexCache``)."""
        stats = spoiler_stats._load_stats(db, book_id)
        if stats is None:
            stats = spoiler_stats._book_stats(db, book_id)
            spoiler_stats._store_stats(db, book_id, stats)
        total = max(1, sum(stats.count.values()))
        kinds = {
            stem: _distinctive_kind(stem, n, stats.capital.get(stem, 0), total)
            for stem, n in stats.count.items()
        }
        distinctive = frozenset(stem for stem, kind in kinds.items() if kind)
        motifs = frozenset(stem for stem, kind in kinds.items() if kind == "motif")
        lo, hi = db.execute_sql(
            "SELECT min(id), max(id) FROM chunk WHERE book_id = ?", (book_id,)
        ).fetchone()
        chunk_ids = (int(lo), int(hi)) if lo is not None else (0, -1)
        row = db.execute_sql("SELECT title, author FROM book WHERE id = ?", (book_id,)).fetchone()
        cover = " ".join(str(v or "") for v in row or ())
        known = frozenset(
            _STEMMER.stems(w.lower() for w in _WORD.findall(visible_text(cover))).values()
        )
        name_forms = _name_forms(stats.names)
        return cls(
            book_id,
            stats.page_count,
            stats.first_page,
            stats.count,
            distinctive,
            db,
            chunk_ids,
            stats.contents_pages,
            known,
            motifs,
            name_forms,
        )

    def phrase(self, words: str) -> tuple[int, int]:
        """(first page, passages) of a phrase in the book; (0, 0) when it is not there. A
        passage on a contents page is not where a phrase first appears. One FTS5 query."""
        found = self._phrases.get(words)
        if found is None:
            lo, hi = self.chunk_ids
            rows: list[tuple[int, int]] = []
            if self.db is not None and lo <= hi:
                sql, match = route(
                    "SELECT c.start_page, c.end_page FROM chunk_index "
                    "JOIN chunk c ON c.id = chunk_index.rowid "
                    "WHERE chunk_index MATCH ? AND chunk_index.rowid BETWEEN ? AND ? "
                    "ORDER BY chunk_index.rowid LIMIT 50",
                    f'"{words}"',
                )
                rows = positions.execute(self.db, sql, (match, lo, hi), self._texts, (lo, hi))
            real = [int(start) for start, end in rows if int(end) not in self.contents_pages]
            found = (real[0], len(real)) if real else (0, 0)
            self._phrases[words] = found
        return found

    def near(self, a: str, b: str) -> bool:
        """Whether the book has the words ``a`` and ``b`` within ``NEAR`` words of each other
        (one FTS5 query on the search index, remembered)."""
        key = (a, b) if a <= b else (b, a)
        found = self._near.get(key)
        if found is None:
            lo, hi = self.chunk_ids
            found = False
            if self.db is not None and lo <= hi:
                rows = positions.execute(
                    self.db,
                    "SELECT 1 FROM chunk_index WHERE chunk_index MATCH ? "
                    "AND rowid BETWEEN ? AND ? LIMIT 1",
                    (f'NEAR("{key[0]}" "{key[1]}", {NEAR})', lo, hi),
                    self._texts,
                    (lo, hi),
                )
                found = bool(rows)
            self._near[key] = found
        return found

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        return _STEMMER.stems(words)

    def passage_ids(
        self, words: Iterable[str], read_to: int, *, later: bool, limit: int | None = None
    ) -> list[int]:
        """The chunk ids of the passages that best match ``words`` (FTS5's BM25 of any of
        them), within ``read_to`` or (``later``) after it. The index keeps no counts of a
        word in a passage (issue 41; its bm25() would read every matching passage again):
        the ``RANK_DEPTH`` × ``limit`` passages best for their words counted once are read,
        and their words counted as the index counts them (``positions.word_counts``)."""
        lo, hi = self.chunk_ids
        terms = sorted({w for w in words if w.isalnum()})
        if self.db is None or lo > hi or not terms:
            return []
        limit = limit or SUPPORT_PASSAGES
        total, tokens = index_averages(self.db)
        key = (tuple(terms), read_to, later, limit, total)
        found = self._ranked.get(key)  # a prefix and its sentence often share their words
        if found is None:
            found = self._rank(terms, read_to, later, limit, total, tokens)
            if len(self._ranked) > CACHED_RANKINGS:
                self._ranked.clear()
            self._ranked[key] = found
        return list(found)

    def _rank(
        self, terms: list[str], read_to: int, later: bool, limit: int, total: int, tokens: int
    ) -> tuple[int, ...]:
        """``passage_ids``, ranked now."""
        assert self.db is not None
        lo, hi = self.chunk_ids
        inside = self._side(read_to, later)
        held: dict[int, list[str]] = {}
        weight: dict[str, float] = {}
        for term in terms:
            ids, weight[term] = self._matching(term, total)
            for chunk_id in ids:
                if chunk_id in inside:
                    held.setdefault(chunk_id, []).append(term)
        if not held:
            return ()
        mean = tokens / total if total else 1.0
        if not self._lengths:  # every passage's, once: a few ms for a long book
            self._lengths.update(index_lengths(self.db, list(range(lo, hi + 1))))
        lengths = self._lengths

        def once(c: int) -> float:
            return sum(once_bm25(weight[t], lengths.get(c, mean), mean) for t in held[c])

        counted = heapq.nlargest(RANK_DEPTH * limit, held, key=lambda c: (once(c), -c))
        counts = self._counts
        missing = sorted(c for c in counted if any((c, t) not in counts for t in held[c]))
        if missing:  # only the words not counted yet (a longer prefix adds a word or two)
            need = [t for t in terms if any((c, t) not in counts for c in missing)]
            found_now = positions.word_counts(self._texts(missing), need)
            for c in missing:
                for t in need:
                    counts.setdefault((c, t), found_now.get(c, {}).get(t, 0))

        def score(c: int) -> float:
            return sum(
                once_bm25(weight[t], lengths.get(c, mean), mean, max(1, counts[(c, t)]))
                for t in held[c]
            )

        return tuple(heapq.nsmallest(limit, counted, key=lambda c: (-score(c), c)))

    def _matching(self, term: str, total: int) -> tuple[array[int], float]:
        """The book's passages that hold ``term`` and its weight (remembered while the
        library holds ``total`` passages; at most ``CACHED_IDS`` passage ids in all)."""
        found = self._matches.get((term, total))
        if found is None and self.db is not None:
            lo, hi = self.chunk_ids
            sql, match = route(MATCHING, f'"{term}"')
            rows = self.db.execute_sql(sql, (match, lo, hi)).fetchall()
            everywhere = self.db.execute_sql(*_counting(term)).fetchone()
            found = (
                array("q", (int(r[0]) for r in rows)),
                idf(total, int(everywhere[0]) if everywhere else 0),
            )
            held = sum(len(ids) for ids, _ in self._matches.values())
            if held + len(found[0]) > CACHED_IDS:
                self._matches.clear()
            self._matches[(term, total)] = found
        return found or (array("q"), 0.0)

    def _texts(self, ids: list[int]) -> dict[int, str]:
        """The passages' text (the last ``CACHED_TEXTS`` read kept: phrases and words near
        each other are checked on it, sentence after sentence of an answer)."""
        cache = self._text_cache
        missing = [i for i in ids if i not in cache]
        if missing and self.db is not None:
            if len(cache) + len(missing) > CACHED_TEXTS:
                cache.clear()
            cache.update(positions.chunk_texts(self.db)(missing))
        return {i: cache[i] for i in ids if i in cache}

    def _side(self, read_to: int, later: bool) -> frozenset[int]:
        """The book's chunk ids within ``read_to`` (or after it, ``later``), remembered."""
        found = self._sides.get((read_to, later))
        if found is None and self.db is not None:
            lo, hi = self.chunk_ids
            side = "start_page > ?" if later else "end_page <= ?"
            found = frozenset(
                int(r[0])
                for r in self.db.execute_sql(
                    f"SELECT id FROM chunk WHERE id BETWEEN ? AND ? AND {side}", (lo, hi, read_to)
                ).fetchall()
            )
            if len(self._sides) > 64:
                self._sides.clear()
            self._sides[(read_to, later)] = found
        return found or frozenset()

    def passages(
        self, words: Iterable[str], read_to: int, *, later: bool, limit: int | None = None
    ) -> list[frozenset[str]]:
        """The word stems of the passages that best match ``words`` (``passage_ids``), each
        remembered."""
        ids = self.passage_ids(words, read_to, later=later, limit=limit)
        found = self.passage_stems(ids)
        return [found.get(i, frozenset()) for i in ids]

    def passage_stems(self, ids: Iterable[int]) -> dict[int, frozenset[str]]:
        """Chunk id → the word stems of that passage (remembered)."""
        ids = list(ids)
        missing = [i for i in ids if i not in self._passage_stems]
        if missing and self.db is not None:
            marks = ",".join("?" * len(missing))
            for cid, text in self.db.execute_sql(
                f"SELECT id, text FROM chunk_text WHERE id IN ({marks})", missing
            ).fetchall():
                words_ = {w.lower() for w in _WORD.findall(str(text))}
                self._passage_stems[int(cid)] = frozenset(_STEMMER.stems(words_).values())
        return {i: self._passage_stems[i] for i in ids if i in self._passage_stems}

    def windows(self, ids: list[int], read_to: int, *, later: bool) -> list[frozenset[str]]:
        """The word stems of each passage with the passages just before and after it on the
        same side of the bound: a scene runs over more than one passage of the index."""
        lo, hi = self.chunk_ids
        wanted = sorted({j for i in ids for j in (i - 1, i, i + 1) if lo <= j <= hi})
        missing = [j for j in wanted if j not in self._pages]
        if missing and self.db is not None:
            marks = ",".join("?" * len(missing))
            for cid, start, end in self.db.execute_sql(
                f"SELECT id, start_page, end_page FROM chunk WHERE id IN ({marks})", missing
            ).fetchall():
                self._pages[int(cid)] = (int(start), int(end))

        def same_side(j: int) -> bool:
            pages = self._pages.get(j)
            return pages is not None and (pages[0] > read_to if later else pages[1] <= read_to)

        near = {j for j in wanted if same_side(j)}
        stems = self.passage_stems(near)
        return [
            frozenset().union(*(stems.get(j, frozenset()) for j in (i - 1, i, i + 1) if j in near))
            for i in ids
        ]


def _counting(term: str) -> tuple[str, tuple[str]]:
    """The query counting the passages of the whole library that hold ``term``."""
    sql, match = route(COUNT, f'"{term}"')
    return sql, (match,)


def _distinctive_kind(stem: str, n: int, capitalised: int, total: int) -> str:
    """Why a stem is distinctive in the book: "name", "rare", "key" (a key word of the book),
    "motif"; "" when it is not."""
    if len(stem) < MIN_LENGTH or stem.isdigit() or stem in _EXTRA_COMMON:
        return ""
    if n >= MIN_NAME_COUNT and capitalised >= NAME_SHARE * n:
        return "name"
    general = GENERAL_ZIPF.get(stem, 0.0)
    if general < RARE_ZIPF:
        return "rare"
    here = math.log10(n / total * 1e9)
    if n >= MIN_KEY_COUNT and here - general >= KEYNESS:
        return "key"
    if n >= MOTIF_COUNT and general <= MOTIF_ZIPF:
        return "motif"
    return ""


def _name_forms(names: dict[str, int]) -> dict[str, int]:
    """Name form -> the first page of any name form of its stem ("Fezziwigs" is met when
    "Fezziwig" is), for forms long enough to count."""
    usable = {
        form: page
        for form, page in names.items()
        if len(form) >= MIN_LENGTH and not form.isdigit() and form not in _EXTRA_COMMON
    }
    stems = _STEMMER.stems(usable)
    usable = {form: page for form, page in usable.items() if len(stems[form]) >= MIN_LENGTH}
    first: dict[str, int] = {}
    for form, page in usable.items():
        stem = stems[form]
        first[stem] = min(page, first.get(stem, page))
    return {form: first[stems[form]] for form in usable}


def _phrase_word(stem: str) -> bool:
    return (
        len(stem) >= MIN_LENGTH and not stem.isdigit() and GENERAL_ZIPF.get(stem, 0.0) < PHRASE_ZIPF
    )


def _is_plain(stem: str) -> bool:
    if len(stem) < MIN_LENGTH or stem.isdigit() or stem in _EXTRA_COMMON:
        return False
    return GENERAL_ZIPF.get(stem, 0.0) < PLAIN_ZIPF


class SpoilerIndexCache:
    """A few ``SpoilerIndex`` kept per (database, book): building one reads the whole book."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, int, str], SpoilerIndex] = OrderedDict()

    def get(self, db: pw.SqliteDatabase, book_id: int) -> SpoilerIndex:
        row = db.execute_sql("SELECT sha256 FROM book WHERE id = ?", (book_id,)).fetchone()
        key = (str(db.database), book_id, row[0] if row else "")
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        index = SpoilerIndex.build(db, book_id)
        with self._lock:
            self._items[key] = index
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return index
