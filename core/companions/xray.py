"""X-Ray: the people, places and things the reader has met by ``read_to``, from the book
itself (no model needed): each with its mentions by page, where it first appears, and a
description made of its most telling sentences on the pages read.

How it stays within the bound: each page is scanned once, on its own (``names.scan_page``),
and the scans are kept (``companion_page``); the entries are then decided from the scans of
pages 1..``read_to`` alone (``entities.find_entities``) and kept with the bound they were
made for (``companion_item`` "xray"). Reading on scans only the new pages; a lowered bound
is decided again from the scans it still covers (nothing scanned after it is read back). A
book read again (another file print) is scanned again.

A model's note on an entry (``core.companions.model``) is kept apart, keyed by the entry and
the pages it was written from, and shown only while those pages are within the bound.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import peewee as pw

from core.companions.entities import Found, find_entities
from core.companions.names import PageScan, capitalised_words, form_key, scan_page
from core.companions.store import CompanionStore, book_print
from core.companions.xray_merge import Edits, apply_edits, merge_by_evidence
from core.progress import CancelToken

XRAY_VERSION = 7  # bump when what a page scan holds or how entries are decided changes
NOTE_VERSION = 4  # the model's notes (paid for): bump only when what a note is changes
KIND_PAGE = "xray"
KIND_STATE = "xray_state"
KIND_XRAY = "xray"
KIND_NOTE = "xray_note"  # the model's notes (core/companions/model.py writes them)
KIND_EDITS = "xray_edits"  # the reader's merges, splits, renames and hides (kept)
EDITS_VERSION = 1
BATCH = 50  # pages scanned between progress reports and cancel checks

_NOT_THINGS = ("ly", "ing", "ed", "est")  # how, doing, done, most: not things
_LOWER = re.compile(r"\b[a-z]+\b")
Progress = Callable[[int, int], None]  # (pages done, pages to do)


@dataclass(frozen=True)
class Entry:
    """One entry of the X-Ray, within the bound it was made for."""

    key: str
    name: str
    kind: str  # "person", "place" or "other"
    aliases: tuple[str, ...]
    mentions: tuple[tuple[int, int, str], ...]  # (page, uses, a form as written there)
    description: tuple[tuple[int, str], ...]  # (page, sentence) from the pages read
    note: str = ""  # a model's note, when one was made from pages within the bound

    @property
    def first_page(self) -> int:
        return self.mentions[0][0]

    @property
    def uses(self) -> int:
        return sum(m[1] for m in self.mentions)

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["first_page"] = self.first_page
        data["uses"] = self.uses
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(
            str(data["key"]),
            str(data["name"]),
            str(data["kind"]),
            tuple(data["aliases"]),
            tuple((int(p), int(n), str(f)) for p, n, f in data["mentions"]),
            tuple((int(p), str(s)) for p, s in data["description"]),
            str(data.get("note", "")),
        )


@dataclass(frozen=True)
class XRay:
    book_id: int
    read_to: int
    entries: tuple[Entry, ...] = field(default=())

    def find(self, text: str) -> Entry | None:
        """The entry a selected name is ("Miss Bingley", "Lizzy", "Darcy’s"), or None."""
        wanted = form_key(text.strip().strip("“”\"‘’'.,;:!?()").removesuffix("’s"))
        if not wanted:
            return None
        for entry in self.entries:
            if any(form_key(n) == wanted for n in entry.names()):
                return entry
        last = wanted.split()[-1]
        for entry in self.entries:  # "Bingley" selected: the entry mostly named so
            if any(form_key(n).split()[-1] == last for n in entry.names()):
                return entry
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "book_id": self.book_id,
            "read_to": self.read_to,
            "entries": [e.to_json() for e in self.entries],
        }


def notes_for(db: pw.SqliteDatabase, book_id: int, bound: int) -> dict[str, str]:
    """Entry key → the model's note, for notes written only from pages within ``bound``."""
    out: dict[str, str] = {}
    for value in CompanionStore(db).items(book_id, KIND_NOTE, NOTE_VERSION).values():
        if value.get("text") and all(int(p) <= bound for p in value.get("pages", [])):
            out[str(value["entry"])] = str(value["text"])
    return out


def bound_of(db: pw.SqliteDatabase, book_id: int) -> int:
    """The last page the companions may use: ``read_to``, or the whole book when finished."""
    row = db.execute_sql(
        "SELECT read_to, finished, page_count FROM book WHERE id = ?", (book_id,)
    ).fetchone()
    if row is None:
        from core.errors import BookCode, BookError

        raise BookError(BookCode.NOT_FOUND, f"There is no book {book_id} in the library.")
    read_to, finished, count = (int(v) for v in row)
    return max(0, min(count if finished else read_to, count))


def stored(db: pw.SqliteDatabase, book_id: int, read_to: int | None = None) -> XRay | None:
    """The X-Ray kept for exactly this bound (one small read: what the tab shows at once),
    or None when it must be made (``build``)."""
    bound = bound_of(db, book_id) if read_to is None else read_to
    data = CompanionStore(db).item(book_id, KIND_XRAY, "current", XRAY_VERSION)
    if not data or data.get("read_to") != bound or data.get("print") != book_print(db, book_id):
        return None
    if data.get("edits", {}) != edits_of(db, book_id).to_json():
        return None
    return _xray(book_id, bound, data["entries"])


def build(
    db: pw.SqliteDatabase,
    book_id: int,
    read_to: int | None = None,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> XRay:
    """The X-Ray for ``read_to`` (the book's bound when None): scans the pages not scanned
    yet up to it, decides the entries from pages 1..``read_to`` and keeps them. Blocking:
    run it off the UI thread."""
    store = CompanionStore(db)
    bound = bound_of(db, book_id) if read_to is None else read_to
    fingerprint = book_print(db, book_id)
    state = store.item(book_id, KIND_STATE, "", XRAY_VERSION) or {}
    if state.get("print") != fingerprint:
        store.drop_pages(book_id, KIND_PAGE)
        state = {"print": fingerprint, "scanned": 0}
    scanned = int(state.get("scanned", 0))
    if bound > scanned:
        _scan(db, store, book_id, scanned, bound, progress, cancel)
        store.put_item(
            book_id, KIND_STATE, "", XRAY_VERSION, {"print": fingerprint, "scanned": bound}
        )
    rows = store.page_rows(book_id, KIND_PAGE, bound)
    found = find_entities([(page, PageScan.from_json(data)) for page, data in rows])
    from core.store.library import page_texts

    texts = [(n, t) for n, t in page_texts(db, book_id) if n <= bound]
    edits = edits_of(db, book_id)
    found = apply_edits(merge_by_evidence(found, texts), edits, texts)
    notes = notes_for(db, book_id, bound)
    entries = [_entry(f, bound, notes.get(f.key, "")) for f in found]
    value = {
        "read_to": bound,
        "print": fingerprint,
        "made": time.time(),
        "edits": edits.to_json(),
        "entries": [e.to_json() for e in entries],
    }
    store.put_item(book_id, KIND_XRAY, "current", XRAY_VERSION, value)
    return XRay(book_id, bound, tuple(entries))


def edits_of(db: pw.SqliteDatabase, book_id: int) -> Edits:
    """The reader's own changes to the book's X-Ray (kept with the book)."""
    return Edits.from_json(CompanionStore(db).item(book_id, KIND_EDITS, "", EDITS_VERSION))


def edit(db: pw.SqliteDatabase, book_id: int, what: str, *names: str) -> Edits:
    """Keep one of the reader's changes: ``merge A B`` (A into B), ``split ENTRY ALIAS``,
    ``rename ENTRY NEW``, ``hide NAME``, ``unhide NAME``; applied from the next X-Ray on."""
    bound_of(db, book_id)  # a clear error for a book that is not there
    edits = edits_of(db, book_id).add(what, *names)
    CompanionStore(db).put_item(book_id, KIND_EDITS, "", EDITS_VERSION, edits.to_json())
    return edits


def current(db: pw.SqliteDatabase, book_id: int) -> XRay:
    """The X-Ray for the book's bound: stored, or made now."""
    return stored(db, book_id) or build(db, book_id)


def _scan(
    db: pw.SqliteDatabase,
    store: CompanionStore,
    book_id: int,
    after: int,
    until: int,
    progress: Progress | None,
    cancel: CancelToken | None,
) -> None:
    from core.companions.entities import NICKNAMES
    from core.search.frontmatter import is_front_matter
    from core.store.library import page_texts

    texts = page_texts(db, book_id)
    capitalised = capitalised_words(text for _, text in texts)
    row = db.execute_sql("SELECT title, author FROM book WHERE id = ?", (book_id,)).fetchone()
    exclude = frozenset(form_key(v) for v in (row or ()) if v)  # the cover is no character
    rare = rare_words(db, book_id, (text for _, text in texts))
    todo = [(n, t) for n, t in texts if after < n <= until]
    rows: list[tuple[int, Any]] = []
    for i, (number, text) in enumerate(todo):
        if cancel is not None:
            cancel.check()
        scan = (
            PageScan()
            if is_front_matter(text)
            else scan_page(text, capitalised, NICKNAMES, exclude, rare)
        )
        rows.append((number, scan.to_json()))
        if len(rows) >= BATCH:
            store.put_pages(book_id, KIND_PAGE, rows)
            rows = []
            if progress is not None:
                progress(i + 1, len(todo))
    store.put_pages(book_id, KIND_PAGE, rows)
    if progress is not None:
        progress(len(todo), len(todo))


THING_ZIPF = 3.5  # a thing is a word rarer than this in English (Zipf: log10 per billion)


def rare_words(db: pw.SqliteDatabase, book_id: int, texts: Iterable[str]) -> frozenset[str]:
    """The book's lower-case words (four letters or more) that are rare in general English,
    by the answer check's frequency list and stemming, and do not read as a quality or a
    span of time (``abstract``): only these are counted as things."""
    from core.agent.spoilers import GENERAL_ZIPF, SpoilerIndex

    words: set[str] = set()
    for text in texts:
        words.update(w for w in _LOWER.findall(text) if len(w) >= 4 and not w.endswith(_NOT_THINGS))
    stems = SpoilerIndex(book_id, 0, {}, {}, frozenset()).stems(words)
    rare = {w for w in words if GENERAL_ZIPF.get(stems[w], 0.0) < THING_ZIPF}
    parts = {p for w in rare for p in _parts(w)}
    part_stems = SpoilerIndex(book_id, 0, {}, {}, frozenset()).stems(parts)

    def common(part: str) -> bool:
        return GENERAL_ZIPF.get(part_stems.get(part, part), 0.0) >= THING_ZIPF

    return frozenset(w for w in rare if not abstract(w, common))


# a noun made from a quality or an act ("imprudence", "approbation", "perverseness"):
# (suffix, shortest word); "-ness" only after a word ("governess" stays a thing)
_ABSTRACT = (
    ("ence", 8),
    ("ance", 8),
    ("tion", 8),
    ("sion", 8),
    ("ity", 8),
    ("ety", 8),
    ("ship", 7),
    ("hood", 7),
    ("ism", 7),
)
_UNDOING = ("mis", "dis", "un")  # "misfortune", "displeasure", "uneasiness": not things
_SPANS = ("night", "month", "week", "year")  # "fortnight", "twelvemonth": spans of time


def _parts(word: str) -> list[str]:
    out = [word[: -len("ness")]] if word.endswith("ness") else []
    if out and out[0].endswith("i"):
        out.append(out[0][:-1] + "y")  # "happiness" → "happy"
    out += [word[len(p) :] for p in _UNDOING if word.startswith(p)]
    out += [word[: -len(s)] for s in _SPANS if word.endswith(s)]
    return [p for p in out if len(p) >= 3]


def abstract(word: str, common: Callable[[str], bool]) -> bool:
    """Whether ``word`` names a quality, an act or a span of time rather than something one
    points at, by its form: an abstract suffix, "-ness" after a common word, "mis-", "dis-"
    or "un-" before one, or a common word before "-night", "-month" ("fortnight")."""
    if any(word.endswith(s) and len(word) >= n for s, n in _ABSTRACT):
        return True
    if word.endswith("ness") and any(common(p) for p in _parts(word)[:2]):
        return True
    if any(word.startswith(p) and common(word[len(p) :]) for p in _UNDOING):
        return True
    return any(
        word.endswith(s) and len(word) - len(s) >= 3 and common(word[: -len(s)]) for s in _SPANS
    )


def _entry(found: Found, bound: int, note: str = "") -> Entry:
    return Entry(
        found.key,
        found.name,
        found.kind,
        found.aliases,
        tuple(m for m in found.mentions if m[0] <= bound),
        tuple(d for d in found.description if d[0] <= bound),
        note,
    )


def _xray(book_id: int, bound: int, entries: list[dict[str, Any]]) -> XRay:
    made = [Entry.from_json(e) for e in entries]
    # the bound is the one it was made for; never show a page past it, whatever was stored
    kept = [
        Entry(
            e.key,
            e.name,
            e.kind,
            e.aliases,
            tuple(m for m in e.mentions if m[0] <= bound),
            tuple(d for d in e.description if d[0] <= bound),
            e.note,
        )
        for e in made
    ]
    return XRay(book_id, bound, tuple(e for e in kept if e.mentions))
