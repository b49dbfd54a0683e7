"""A book's word statistics for the spoiler check: where each word stem first appears, how
often, how often capitalised; counted once (reading the whole book) and stored in the library
(table ``spoiler_stats``). Front matter (contents, lists of illustrations, title pages,
indexes) is left out: it names what is coming, it does not tell it.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import zlib
from collections import Counter
from dataclasses import dataclass, field

import peewee as pw

from core.agent.spoiler_text import _SPACES, _STEMMER, _WORD

log = logging.getLogger(__name__)


def _norm_line(line: str) -> str:
    # a contents table reads "CHAPTER I. · Down the Rabbit-Hole" (cells joined by " · ")
    return _SPACES.sub(" ", line.replace(" · ", " ")).strip().casefold()


# The word statistics of a book are stored in the library (table ``spoiler_stats``, schema
# 9) the first time an index is built, so a new process does not read the whole book again.
# Bump STATS_VERSION when what is counted changes (tokenizing, stemming, contents pages); the
# thresholds that pick distinctive words apply when the index is built, so they may change
# freely.
STATS_VERSION = 3  # 2: front-matter pages (lists of illustrations, title pages) left out;
# 3: names by word form (``BookStats.names``)

# A capitalised word inside a sentence (after a small letter, a digit or a comma on the same
# line, perhaps behind an opening quote): a name, not a sentence's first word.
# Or a word called out in a quote ("“Belle,” said the husband"): someone addressed.
_MID_CAPITAL = re.compile(
    r"[a-z0-9,;][ \t]+[\"'‘“(]?([A-ZÀ-ÖØ-Þ][^\W_]*)|[\"‘“]([A-ZÀ-ÖØ-Þ][^\W_]*)[,!?][\"’”]"
)
NAME_SHARE = 0.8  # a word form is a name when written with a capital this often


@dataclass(frozen=True)
class BookStats:
    page_count: int
    first_page: dict[str, int]  # stem -> first page that uses it
    count: dict[str, int]  # stem -> uses in the book
    capital: dict[str, int]  # stem -> uses written with a capital
    contents_pages: frozenset[int]
    # word form (lower case) -> its first page, for the forms the book writes as names: with a
    # capital (nearly) every time, at least once inside a sentence. A name counted by its
    # form, not its stem: "Belle" (once, p. 44 of A Christmas Carol) shares the stem "bell"
    # with the bells of p. 13; a name used once is no name by the stem counts.
    names: dict[str, int] = field(default_factory=dict)


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
    mid_capital: set[str] = set()
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
        mid_capital.update(a or b for a, b in _MID_CAPITAL.findall(text))
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
    forms: Counter[str] = Counter()
    form_capital: Counter[str] = Counter()
    for form, n in surface.items():
        stem = stems[form.lower()]
        count[stem] += n
        forms[form.lower()] += n
        if form[0].isupper():
            capital[stem] += n
            form_capital[form.lower()] += n
    names = {
        form.lower(): first_word_page[form.lower()]
        for form in mid_capital
        if form_capital[form.lower()] >= NAME_SHARE * forms[form.lower()]
        and form.lower() in first_word_page
    }
    return BookStats(
        int(pages[-1][0]) if pages else 0,
        first_page,
        dict(count),
        dict(capital),
        frozenset(contents_pages),
        names,
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
            {str(form): int(first) for form, first in data["names"]},
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
        "names": sorted(stats.names.items()),
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
