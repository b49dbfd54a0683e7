"""The answer check (issue 16): hide sentences that name what the reader cannot know yet.

The tools never read past the reader's bound, but a model may know a famous book from its
training and write the ending anyway. This module checks the answer itself, sentence by sentence
as it streams, before a sentence is shown: a sentence is hidden when it uses a word that is
*distinctive in this book* and that the book first uses only after ``read_to`` (the last page
read), unless the reader wrote it in the question or the selection.

A word counts when it is one of:

- a name: the book writes it with a capital letter (nearly) every time ("Queen", "Grete");
- a rare word: used less than about once per million words in general English ("hookah");
- a key word of this book: used here over 15 times more often than in general English and at
  least three times ("Hatter", "violin");
- a motif: a less common word (under about 30 per million in English) the book uses at least
  three times ("mushroom", "pepper").

A phrase counts too: two words or "X of Y" ("tea-party", "pack of cards"), each met before the
bound, that the book has together only after it, in at least three passages (a recurring name
or place). Two less common words that are each new after the bound count together when the book has
them within a few words of each other (one FTS5 NEAR query on the search index): a sentence
that paraphrases a later passage shares several of its words ("sewing ... underwear").

Common English words never count alone, whatever the book does with them ("therefore" first
used late in *Alice* hides nothing). The general frequencies are in
``core.agent.spoiler_words`` (Google Books Ngram counts, see there). Words are compared by their
SQLite FTS5 porter stem, the same stemming the search index uses, so "lodgers" matches
"lodger". Front matter does not count as read (issue 23): text that lists chapter titles before
the chapters themselves (a table of contents), a page headed "List of Illustrations",
"Contents" or "Index", and near the start a page that is only a list of short lines (a title
page, a list of plates): it names what is coming, it does not tell it. The book's title and
author are always known.

The check reads what the reader will see (``visible_text``): Markdown marks and links
rendered to their text, HTML entities decoded, NFKC, format characters (zero-width spaces and
joiners, soft hyphens, direction marks) and combining accents dropped, a right-to-left
override read in its shown order, Cyrillic and Greek look-alike letters folded to Latin. A
page label past the bound ("[p. 300]") is a term of its own. Phrases are never matched across
the model's punctuation ("The answer: Holmes" is no phrase of the book).

The semantic layer (issue 23): a sentence that tells something about the story (it names
something of this book, or tells what someone does) and has enough content words must be
supported by what the reader has read. Lexically: the passages after the bound that best
match it (BM25) must not cover much more of its words (weighted by rarity) than the passages
within the bound, the passages the answer used, the question and the selection do. An
unsupported sentence is held back with its own reason ("unsupported"), apart from the
later-name notice. A leak told in plain words still passes when the pages read match it as
well as the later ones; the figures by kind are in tests/bench/bench_spoilers.py.
The system prompt's rule (``prompts/spoiler_rule.md``) is the first line of defence; this is
the second.

Use: build one ``SpoilerIndex`` per book (``SpoilerIndexCache`` keeps them), one
``SpoilerGuard`` per answer; ``feed`` the streamed text, then ``flush`` at the end. The
segments returned put together are exactly the text fed in.
"""

from __future__ import annotations

import html
import json
import logging
import math
import re
import sqlite3
import threading
import unicodedata
import zlib
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

import peewee as pw

from core.agent.context import label_pages
from core.agent.spoiler_words import BANDS

log = logging.getLogger(__name__)

# A word as the FTS5 unicode61 tokenizer sees it: a run of letters and digits.
_WORD = re.compile(r"[^\W_]+")
_SPACES = re.compile(r"\s+")
_GAP = re.compile(r"\s+|-|\s*[-‐–]\s*")  # what may stand between the words of a phrase

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
# The semantic layer: a sentence about the story must be supported by what the reader has read.
SEARCH_WORDS = 5  # the rarest content words of a sentence look for its passages
SUPPORT_PASSAGES = 4  # the passages within the bound that best match a sentence
FUNCTION_ZIPF = 6.0  # words this common say nothing about the story ("the", "was", "he")
MIN_STORY_WORDS = 5  # a sentence with fewer content words is not checked for support
LATER_MATCH = 0.5  # a later passage has at least this share of the sentence (by rarity) ...
STORY_GATE = True
SUPPORT_MARGIN = 0.2  # ... and this much more than any passage the reader has read
DOUBT_MATCH = 0.3  # a sentence short of that but this close is doubtful: a model may verify it
DOUBT_MARGIN = 0.05
_STORY_PRONOUNS = frozenset("he she they his her him them their hers".split())
# Common words the frequency list lacks (it has no contractions' pieces).
_EXTRA_COMMON = frozenset(
    "cannot don isn wasn didn doesn couldn wouldn shouldn aren weren hasn haven hadn won okay".split()
)


def _general_zipf() -> dict[str, float]:
    table: dict[str, float] = {}
    for band, stems in BANDS.items():
        for stem in stems.split():
            table[stem] = band / 10
    return table


GENERAL_ZIPF = _general_zipf()


# --- what the reader will see ---------------------------------------------------------------
# The check reads the sentence as the chat pane shows it, not its Markdown source: a name
# split by emphasis ("**Windi**bank"), an entity ("Windi&#98;ank"), an invisible character, a
# combining accent, a look-alike letter from another script or a right-to-left override all
# show the reader the same name.

# Latin look-alikes of Cyrillic and Greek letters (Unicode's confusables, the letters that
# matter in names); NFKC already folds fullwidth and mathematical letters.
_CONFUSABLES = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеорсхуіјѕԁһӏԛԝ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχϲ",  # Greek
    "ABCEHIJKMOPSTXYaeopcxyijsdhlqwABEZHIKMNOPTYXaikvoptuxc",
)
_RTL_OVERRIDE = re.compile("\u202e([^\u202a-\u202e]*)(?:\u202c|$)")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARKS = re.compile(r"[*_`~]+|^\s{0,3}(?:#{1,6}|>+|[-+*]|\d+[.)])\s+", re.M)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


def visible_text(text: str) -> str:
    """``text`` as the reader sees it, reduced to plain letters: Markdown marks and links
    rendered to their text, entities decoded, then NFKC, format characters (zero-width
    spaces and joiners, soft hyphens, direction marks) and combining accents dropped, a
    right-to-left override read in the order it is shown, look-alike letters folded to Latin."""
    text = _MD_LINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _MD_MARKS.sub("", text)
    text = html.unescape(text)
    text = _RTL_OVERRIDE.sub(lambda m: m.group(1)[::-1], text)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFC", text).translate(_CONFUSABLES)


class _Stemmer:
    """Porter stems from SQLite's own FTS5 tokenizer (the search index's), cached.

    One private in-memory database per process; a lock makes it safe from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}
        self._con = sqlite3.connect(":memory:", check_same_thread=False)
        self._con.execute(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
        )
        self._con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        """Lower-case word → stem for each word (words the tokenizer drops map to themselves)."""
        cache = self._cache
        wanted = set(words)
        missing = [w for w in wanted if w not in cache]
        if missing:
            with self._lock:
                missing = [w for w in missing if w not in cache]
                if missing:
                    with self._con:
                        self._con.executemany(
                            "INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(missing, 1)
                        )
                        rows = self._con.execute(
                            "SELECT doc, term FROM v WHERE offset = 0"
                        ).fetchall()
                        self._con.execute("DELETE FROM t")
                    found = dict(rows)
                    for i, word in enumerate(missing, 1):
                        cache[word] = found.get(i, word)
        return {w: cache[w] for w in wanted}


_STEMMER = _Stemmer()


def _norm_line(line: str) -> str:
    # a contents table reads "CHAPTER I. · Down the Rabbit-Hole" (cells joined by " · ")
    return _SPACES.sub(" ", line.replace(" · ", " ")).strip().casefold()


@dataclass(frozen=True)
class SpoilerTerm:
    """A word of the answer the reader cannot know yet: as written, and the book's first page."""

    term: str
    first_page: int


@dataclass(frozen=True)
class Segment:
    """A sentence of the answer (or the tail). ``hidden`` segments keep their full text."""

    text: str
    hidden: bool
    terms: tuple[SpoilerTerm, ...] = ()
    kind: str = "later"  # why it is hidden: "later" (names what comes later) or "unsupported"
    doubtful: bool = False  # shown by the lexical test, but a model may want to verify it


# The word statistics of a book are stored in the library (table ``spoiler_stats``, schema
# 9) the first time an index is built, so a new process does not read the whole book again.
# Bump STATS_VERSION when what is counted changes (tokenizing, stemming, contents pages); the
# thresholds that pick distinctive words apply when the index is built, so they may change
# freely.
STATS_VERSION = 2  # 2: front-matter pages (lists of illustrations, title pages) left out


@dataclass(frozen=True)
class BookStats:
    page_count: int
    first_page: dict[str, int]  # stem -> first page that uses it
    count: dict[str, int]  # stem -> uses in the book
    capital: dict[str, int]  # stem -> uses written with a capital
    contents_pages: frozenset[int]


def _book_stats(db: pw.SqliteDatabase, book_id: int) -> BookStats:
    """Read the whole book once and count its words."""
    from core.store.library import page_texts

    pages = page_texts(db, book_id)
    toc = db.execute_sql(
        "SELECT title, page FROM toc_entry WHERE book_id = ?", (book_id,)
    ).fetchall()
    heading_page: dict[str, set[int]] = {}
    for title, page in toc:
        heading_page.setdefault(_norm_line(title), set()).add(int(page))

    # A table of contents is front matter: look for one only in the first pages.
    front = max(10, len(pages) // 20) if heading_page else 0
    first_word_page: dict[str, int] = {}
    seen: set[str] = set()
    surface: Counter[str] = Counter()
    contents_pages: set[int] = set()
    front_lists = max(10, len(pages) // 20)
    for number, text in pages:
        if _is_front_matter(text, int(number) <= front_lists):
            contents_pages.add(int(number))
            continue  # a list of illustrations, a title page, an index: names, not story
        if number <= front:
            stripped = _strip_contents(text, int(number), heading_page)
            if stripped is not text:
                contents_pages.add(int(number))
            text = stripped
        words = _WORD.findall(text)
        surface.update(words)
        new = set(words) - seen
        if new:
            seen |= new
            for form in new:
                first_word_page.setdefault(form.lower(), int(number))

    stems = _STEMMER.stems(first_word_page)
    first_page: dict[str, int] = {}
    count: Counter[str] = Counter()
    capital: Counter[str] = Counter()
    for word, page in first_word_page.items():
        stem = stems[word]
        if page < first_page.get(stem, page + 1):
            first_page[stem] = page
    for form, n in surface.items():
        stem = stems[form.lower()]
        count[stem] += n
        if form[0].isupper():
            capital[stem] += n
    return BookStats(
        int(pages[-1][0]) if pages else 0,
        first_page,
        dict(count),
        dict(capital),
        frozenset(contents_pages),
    )


def _load_stats(db: pw.SqliteDatabase, book_id: int) -> BookStats | None:
    try:
        row = db.execute_sql(
            "SELECT version, data FROM spoiler_stats WHERE book_id = ?", (book_id,)
        ).fetchone()
    except (sqlite3.Error, pw.DatabaseError) as exc:  # a library from before schema 9
        log.info("stored word statistics unreadable: %s", exc)
        return None
    if row is None or row[0] != STATS_VERSION:
        return None
    try:
        data = json.loads(zlib.decompress(bytes(row[1])))
        stems = data["stems"]
        return BookStats(
            int(data["pages"]),
            {s: int(first) for s, first, _, _ in stems},
            {s: int(n) for s, _, n, _ in stems},
            {s: int(caps) for s, _, _, caps in stems if caps},
            frozenset(int(p) for p in data["contents"]),
        )
    except (ValueError, KeyError, TypeError, zlib.error) as exc:  # damaged: count again
        log.warning("stored word statistics of book %s unusable: %s", book_id, exc)
        return None


def _store_stats(db: pw.SqliteDatabase, book_id: int, stats: BookStats) -> None:
    """Keep the statistics for next time; only speed is lost when the library cannot take
    them now (busy, read-only, full)."""
    data = {
        "pages": stats.page_count,
        "contents": sorted(stats.contents_pages),
        "stems": [
            [stem, first, stats.count.get(stem, 0), stats.capital.get(stem, 0)]
            for stem, first in stats.first_page.items()
        ],
    }
    blob = zlib.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(), 6)
    try:
        with db.atomic():
            if db.execute_sql("SELECT 1 FROM book WHERE id = ?", (book_id,)).fetchone():
                db.execute_sql(
                    "INSERT OR REPLACE INTO spoiler_stats (book_id, version, data) "
                    "VALUES (?, ?, ?)",
                    (book_id, STATS_VERSION, blob),
                )
    except (sqlite3.Error, pw.DatabaseError) as exc:
        log.info("word statistics of book %s not stored: %s", book_id, exc)


def prepare_book(db: pw.SqliteDatabase, book_id: int) -> bool:
    """Count and store a book's word statistics now (right after import, off the UI thread),
    so its first question does not wait for them. True when they were counted."""
    try:
        row = db.execute_sql(
            "SELECT version FROM spoiler_stats WHERE book_id = ?", (book_id,)
        ).fetchone()
    except (sqlite3.Error, pw.DatabaseError):
        row = None
    if row is not None and row[0] == STATS_VERSION:
        return False
    _store_stats(db, book_id, _book_stats(db, book_id))
    return True


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
    _near: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)
    _phrases: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    _passage_stems: dict[int, frozenset[str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def build(cls, db: pw.SqliteDatabase, book_id: int) -> SpoilerIndex:
        """The book's word statistics, stored in the library the first time (reading the
        whole book: about 0.2 s for 3 MB of text) and read back from there afterwards, in
        every process. Cache the result (``SpoilerIndexCache``)."""
        stats = _load_stats(db, book_id)
        if stats is None:
            stats = _book_stats(db, book_id)
            _store_stats(db, book_id, stats)
        total = max(1, sum(stats.count.values()))
        distinctive = frozenset(
            stem
            for stem, n in stats.count.items()
            if _is_distinctive(stem, n, stats.capital.get(stem, 0), total)
        )
        lo, hi = db.execute_sql(
            "SELECT min(id), max(id) FROM chunk WHERE book_id = ?", (book_id,)
        ).fetchone()
        chunk_ids = (int(lo), int(hi)) if lo is not None else (0, -1)
        row = db.execute_sql("SELECT title, author FROM book WHERE id = ?", (book_id,)).fetchone()
        cover = " ".join(str(v or "") for v in row or ())
        known = frozenset(
            _STEMMER.stems(w.lower() for w in _WORD.findall(visible_text(cover))).values()
        )
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
        )

    def phrase(self, words: str) -> tuple[int, int]:
        """(first page, passages) of a phrase in the book; (0, 0) when it is not there. A
        passage on a contents page is not where a phrase first appears. One FTS5 query."""
        found = self._phrases.get(words)
        if found is None:
            lo, hi = self.chunk_ids
            rows: list[tuple[int, int]] = []
            if self.db is not None and lo <= hi:
                rows = self.db.execute_sql(
                    "SELECT c.start_page, c.end_page FROM chunk_index "
                    "JOIN chunk c ON c.id = chunk_index.rowid "
                    "WHERE chunk_index MATCH ? AND chunk_index.rowid BETWEEN ? AND ? "
                    "ORDER BY chunk_index.rowid LIMIT 50",
                    (f'"{words}"', lo, hi),
                ).fetchall()
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
                row = self.db.execute_sql(
                    "SELECT 1 FROM chunk_index WHERE chunk_index MATCH ? "
                    "AND rowid BETWEEN ? AND ? LIMIT 1",
                    (f'NEAR("{key[0]}" "{key[1]}", {NEAR})', lo, hi),
                ).fetchone()
                found = row is not None
            self._near[key] = found
        return found

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        return _STEMMER.stems(words)

    def passage_ids(
        self, words: Iterable[str], read_to: int, *, later: bool, limit: int | None = None
    ) -> list[int]:
        """The chunk ids of the passages that best match ``words`` (BM25, one FTS5 query),
        within ``read_to`` or (``later``) after it."""
        lo, hi = self.chunk_ids
        terms = sorted({w for w in words if w.isalnum()})
        if self.db is None or lo > hi or not terms:
            return []
        query = " OR ".join(f'"{w}"' for w in terms)
        where = "c.start_page > ?" if later else "c.end_page <= ?"
        rows = self.db.execute_sql(
            "SELECT chunk_index.rowid FROM chunk_index JOIN chunk c ON c.id = chunk_index.rowid "
            f"WHERE chunk_index MATCH ? AND chunk_index.rowid BETWEEN ? AND ? AND {where} "
            "ORDER BY bm25(chunk_index) LIMIT ?",
            (query, lo, hi, read_to, limit or SUPPORT_PASSAGES),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def passages(
        self, words: Iterable[str], read_to: int, *, later: bool, limit: int | None = None
    ) -> list[frozenset[str]]:
        """The word stems of the passages that best match ``words`` (``passage_ids``), each
        remembered."""
        ids = self.passage_ids(words, read_to, later=later, limit=limit)
        if self.db is None:
            return []
        missing = [i for i in ids if i not in self._passage_stems]
        if missing:
            marks = ",".join("?" * len(missing))
            for cid, text in self.db.execute_sql(
                f"SELECT id, text FROM chunk_text WHERE id IN ({marks})", missing
            ).fetchall():
                words_ = {w.lower() for w in _WORD.findall(str(text))}
                self._passage_stems[int(cid)] = frozenset(_STEMMER.stems(words_).values())
        return [self._passage_stems.get(i, frozenset()) for i in ids]


def _strip_contents(text: str, number: int, heading_page: dict[str, set[int]]) -> str:
    """The page without lines that are chapter titles of other pages (a table of contents)."""
    lines = text.split("\n")
    kept = [
        line
        for line in lines
        if not (pages := heading_page.get(_norm_line(line))) or number in pages
    ]
    return "\n".join(kept) if len(kept) != len(lines) else text


_FRONT_HEADINGS = re.compile(
    r"(?:list of (?:illustrations|plates|figures|maps)|illustrations|table of contents|"
    r"contents|index|dramatis person\w*|characters|persons of the (?:play|story))\W*",
    re.I,
)
_SENTENCE_END = tuple(".!?\"”’'»")


def _is_front_matter(text: str, near_start: bool) -> bool:
    """Whether a page is front (or back) matter that names what is to come without telling
    it: a page headed "List of Illustrations", "Contents", "Index" (anywhere in the book),
    or, near the start, a page that is a list: short lines that are not sentences."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return False
    if _FRONT_HEADINGS.fullmatch(lines[0]) and len(lines) >= 3:
        return True
    if not near_start or len(lines) < 4:
        return False
    listed = sum(1 for line in lines if len(line.split()) <= 8 and not line.endswith(_SENTENCE_END))
    return listed >= 0.75 * len(lines)


def _is_distinctive(stem: str, n: int, capitalised: int, total: int) -> bool:
    if len(stem) < MIN_LENGTH or stem.isdigit() or stem in _EXTRA_COMMON:
        return False
    if n >= MIN_NAME_COUNT and capitalised >= NAME_SHARE * n:
        return True
    general = GENERAL_ZIPF.get(stem, 0.0)
    if general < RARE_ZIPF:
        return True
    if n >= MOTIF_COUNT and general <= MOTIF_ZIPF:
        return True
    here = math.log10(n / total * 1e9)
    return n >= MIN_KEY_COUNT and here - general >= KEYNESS


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


class SpoilerGuard:
    """Checks one answer as it streams. Not thread-safe: one guard per answer."""

    def __init__(
        self,
        index: SpoilerIndex,
        *,
        read_to: int | None,
        question: str,
        selection: str = "",
        selection_page: int | None = None,
        semantic: bool = True,
    ) -> None:
        """``read_to`` is the last page read (``Book.spoiler_bound``); ``None`` (the reader
        lifted the bound or finished the book) lets everything through."""
        if read_to is not None and read_to < 0:
            raise ValueError(f"read_to must be a page number (0 or more), not {read_to}.")
        self.index = index
        self.read_to = read_to
        question, selection = visible_text(question), visible_text(selection)
        asked = [w.lower() for w in _WORD.findall(f"{question}\n{selection}")]
        asked_stems = index.stems(asked)
        self._known_pairs = {
            (asked_stems[a], asked_stems[b])
            for i, a in enumerate(asked)
            for b in asked[i + 1 : i + 3]
        }
        self._known = set(
            index.stems(w.lower() for w in _WORD.findall(f"{question}\n{selection}")).values()
        ) | set(index.known)
        self._support: set[str] = set(self._known)
        # the page of a selection the reader supplied counts as read for this answer's labels
        self._selection_page = selection_page
        self.semantic = semantic
        self._buffer = ""
        self._pairs = read_to is not None and (
            sum(1 for page in index.first_page.values() if page <= read_to) >= MIN_KNOWN_FOR_PAIRS
        )

    @property
    def pending(self) -> str:
        """The text held back: the sentence being written."""
        return self._buffer

    def feed(self, text: str) -> list[Segment]:
        """Add streamed text; return the sentences that are complete, checked."""
        if not text:
            return []
        resume = len(self._buffer)
        while resume > 0 and self._buffer[resume - 1].isspace():
            resume -= 1  # a boundary is decided by the whole run of spaces after a sentence
        self._buffer += text
        segments: list[Segment] = []
        start = 0
        for end in _boundaries(self._buffer, resume):
            segments.append(self.check(self._buffer[start:end]))
            start = end
        self._buffer = self._buffer[start:]
        return segments

    def release(self, limit: int = 200) -> list[Segment]:
        """When the sentence being written grows past ``limit`` characters (a list without
        full stops, a run-on answer), check and return it up to its last space, so the
        stream never stalls behind one endless "sentence"."""
        if len(self._buffer) <= limit:
            return []
        cut = _last_space(self._buffer, limit)
        if cut <= 0:  # no space yet: never cut a word (a name) in two, wait for one
            return []
        piece, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return [self.check(piece)]

    def flush(self) -> list[Segment]:
        """The end of the answer: check and return what is left."""
        rest, self._buffer = self._buffer, ""
        return [self.check(rest)] if rest else []

    def add_support(self, text: str) -> None:
        """Text the answer may draw on (a passage the tools returned within the bound)."""
        words = _WORD.findall(visible_text(text))
        self._support.update(self.index.stems(w.lower() for w in words).values())

    def check(self, sentence: str) -> Segment:
        """One sentence, checked on its own: first for what comes later, then for support."""
        terms = self.spoiler_terms(sentence)
        if terms:
            return Segment(sentence, True, terms)
        if not self.semantic:
            return Segment(sentence, False)
        scores = self._support_scores(sentence)
        if scores is None:
            return Segment(sentence, False)
        read, later = scores
        if later >= LATER_MATCH and later - read >= SUPPORT_MARGIN:
            return Segment(sentence, True, (), "unsupported")
        doubtful = later >= DOUBT_MATCH and later - read >= DOUBT_MARGIN
        return Segment(sentence, False, doubtful=doubtful)

    def support_passages(self, sentence: str, limit: int = 3) -> list[str]:
        """The text of the passages within the bound that best match ``sentence``: what a
        verification call is shown."""
        index = self.index
        if self.read_to is None or index.db is None:
            return []
        content = self._content(sentence)
        if not content:
            return []
        words = [content[s] for s in sorted(content, key=lambda s: GENERAL_ZIPF.get(s, 0.0))]
        ids = index.passage_ids(words[:SEARCH_WORDS], self.read_to, later=False, limit=limit)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = dict(
            index.db.execute_sql(
                f"SELECT id, text FROM chunk_text WHERE id IN ({marks})", ids
            ).fetchall()
        )
        return [str(rows[i]) for i in ids if i in rows]

    def supported(self, sentence: str) -> bool:
        """Whether the sentence is supported by the pages read (see ``_support_scores``)."""
        scores = self._support_scores(sentence)
        if scores is None:
            return True
        read, later = scores
        return not (later >= LATER_MATCH and later - read >= SUPPORT_MARGIN)

    def _content(self, sentence: str) -> dict[str, str]:
        """Stem → word of the sentence's content words (no function words)."""
        words = [w.lower() for w in _WORD.findall(visible_text(sentence))]
        stems = self.index.stems(words)
        return {
            stems[w]: w
            for w in words
            if len(w) >= MIN_LENGTH
            and not w.isdigit()
            and w not in _EXTRA_COMMON
            and GENERAL_ZIPF.get(stems[w], 0.0) < FUNCTION_ZIPF
        }

    def _support_scores(self, sentence: str) -> tuple[float, float] | None:
        """How well what the reader has read supports a sentence that tells something about
        the story (it names something of this book, or tells what someone does), against how
        well the later pages do: the share of its content words (the rarer, the heavier)
        found in the best-matching passage within the bound, and after it. The passages the
        answer used, the question and the selection count on both sides. ``None``: not a
        sentence to check (no bound, too few content words, not about the story)."""
        index = self.index
        if self.read_to is None or self.read_to >= index.page_count:
            return None
        words = [w.lower() for w in _WORD.findall(visible_text(sentence))]
        content = self._content(sentence)
        if len(content) < MIN_STORY_WORDS:
            return None
        story = any(w in _STORY_PRONOUNS for w in words) or any(
            s in index.distinctive and index.first_page.get(s) is not None for s in content
        )
        if not story and STORY_GATE:
            return None
        support = self._support

        def weight(stem: str) -> float:
            return max(0.5, 6.5 - GENERAL_ZIPF.get(stem, 0.0))

        total = sum(weight(s) for s in content)

        def best(passages: list[frozenset[str]]) -> float:
            if not passages:
                return 0.0
            return (
                max(sum(weight(s) for s in content if s in p or s in support) for p in passages)
                / total
            )

        # the search: the rarest content words (they say most, and common ones match half
        # the book, which costs time)
        words_ = [content[s] for s in sorted(content, key=lambda s: GENERAL_ZIPF.get(s, 0.0))]
        words_ = words_[:SEARCH_WORDS]
        read = best(index.passages(words_, self.read_to, later=False))
        later = best(index.passages(words_, self.read_to, later=True))
        return read, later

    def spoiler_terms(self, sentence: str) -> tuple[SpoilerTerm, ...]:
        """The words of ``sentence`` the reader cannot know yet, in order, each once."""
        index = self.index
        if self.read_to is None or self.read_to >= index.page_count:
            return ()
        read_to = self.read_to
        labels = tuple(
            SpoilerTerm(f"p. {last}" if first == last else f"pp. {first}–{last}", last)
            for first, last in label_pages(sentence)
            if read_to < last and not first == last == self._selection_page
        )
        sentence = visible_text(sentence)
        spans = [(m.start(), m.end()) for m in _WORD.finditer(sentence)]
        if not spans:
            return labels
        words = [sentence[a:b] for a, b in spans]
        stems = index.stems(w.lower() for w in words)
        found: dict[str, SpoilerTerm] = {}
        plain: dict[str, tuple[str, int]] = {}
        for word in words:
            stem = stems[word.lower()]
            if stem in found or stem in plain or stem in self._known:
                continue
            page = index.first_page.get(stem)
            if page is None or page <= read_to:
                continue
            if stem in index.distinctive:
                found[stem] = SpoilerTerm(word, page)
            elif _is_plain(stem) and len(plain) < MAX_PAIR_WORDS:
                plain[stem] = (word, page)
        self._phrase_terms(sentence, spans, stems, found, read_to)
        if len(plain) >= 2 and self._pairs:
            candidates = list(plain.values())
            for i, (a, page_a) in enumerate(candidates):
                for b, page_b in candidates[i + 1 :]:
                    if index.near(a.lower(), b.lower()):
                        found.setdefault(stems[a.lower()], SpoilerTerm(a, page_a))
                        found.setdefault(stems[b.lower()], SpoilerTerm(b, page_b))
        return labels + tuple(found.values())

    def _phrase_terms(
        self,
        sentence: str,
        spans: list[tuple[int, int]],
        stems: dict[str, str],
        found: dict[str, SpoilerTerm],
        read_to: int,
    ) -> None:
        """Add phrases of the sentence ("tea party", "pack of cards") that the book has in several
        passages, all after the bound, though each word alone was met before."""
        index = self.index
        words = [sentence[a:b] for a, b in spans]
        keys = [stems[w.lower()] for w in words]
        for i in range(len(words) - 1):
            a = keys[i]
            if not _phrase_word(a) or a in found:
                continue
            for j in (i + 1, i + 2):
                if j >= len(words):
                    break
                if j == i + 2 and words[i + 1].lower() != "of":
                    break
                if any(
                    _GAP.fullmatch(sentence[spans[k][1] : spans[k + 1][0]]) is None
                    for k in range(i, j)
                ):
                    break  # the model's punctuation between the words: not a phrase of the book
                b = keys[j]
                if not _phrase_word(b) or b in found or (a, b) in self._known_pairs:
                    continue
                page, passages = index.phrase(" ".join(words[i : j + 1]).lower())
                if passages >= MIN_PHRASE_COUNT and page > read_to:
                    text = sentence[spans[i][0] : spans[j][1]]
                    found[a + " " + b] = SpoilerTerm(text, page)


def _last_space(text: str, limit: int) -> int:
    """The offset just after the last whitespace before ``limit`` (or the first after it);
    0 when the text has none."""
    for k in range(min(limit, len(text)) - 1, -1, -1):
        if text[k].isspace():
            return k + 1
    for k in range(limit, len(text)):
        if text[k].isspace():
            return k + 1
    return 0


# --- sentence boundaries --------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr mt vs etc eg ie cf no nos p pp ch chap vol fig ed eds approx "
    "viz al co inc ltd jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_CLOSERS = "\"'’”)]*_»"
_TERMINATORS = ".!?…"


def _boundaries(text: str, start: int) -> list[int]:
    """Offsets where a new sentence begins, found from ``start`` on. A boundary is the first
    non-space character after a line break, or after sentence-final punctuation; it is only
    known once that character has arrived, so the same text split into any chunks gives the
    same boundaries."""
    found: list[int] = []
    n = len(text)
    i = start
    while i < n:
        ch = text[i]
        if not ch.isspace():
            i += 1
            continue
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j >= n:
            break  # the whitespace may go on, or the next character decide
        if i > 0 and ("\n" in text[i:j] or _ends_sentence(text, i, text[j])):
            found.append(j)
        i = j
    return found


def _ends_sentence(text: str, space: int, following: str) -> bool:
    """Whether the text before ``space`` ends a sentence, the next character being ``following``."""
    k = space - 1
    while k >= 0 and text[k] in _CLOSERS:
        k -= 1
    if k < 0 or text[k] not in _TERMINATORS:
        return False
    if following.islower():
        return False  # "e.g. the", "… and then": the sentence goes on
    if text[k] == ".":
        if k >= 2 and text[k - 2 : k + 1] == "...":
            return not following.isdigit()
        m = k - 1
        while m >= 0 and text[m].isalnum():
            m -= 1
        word = text[m + 1 : k]
        if word.lower() in _ABBREVIATIONS:
            return False
        if len(word) == 1 and word.isupper():
            return False  # an initial: "J. Smith"
        if word.isdigit() and not text[text.rfind("\n", 0, m + 1) + 1 : m + 1].strip():
            return False  # "1. " opens a numbered list item
        if following.isdigit() and (not word or word.isdigit()):
            return False  # "3. 4" in a number or list
    return True
