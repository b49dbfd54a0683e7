"""The spoiler check's semantic support test by meaning (issue 23): with no model, a story
sentence that the later pages explain clearly better than the pages read is held back.

A leak told in plain words ("Scrooge keeps Christmas well ever after") shares few rare words
with the book, so the lexical layer (``core.agent.spoiler_support``) cannot place it; a
sentence embedding can: it paraphrases something that happens after the bound. The test
compares the sentence's vector with the book's chunk vectors that search by meaning already
stores (``core.search.vectors``: computed in the background after an import, nothing per book
here) and with what counts as read for the answer (the question, the selection, the passages
the answer used):

    gap = best cosine among chunks after the bound - best among chunks within it and the rest

and holds the sentence when ``gap`` is over the model's margin (``MARGINS``). It is asked only
of sentences the lexical layer finds doubtful and does not hold itself (``SpoilerGuard.check``):
on its own it raises false alarms on honest sentences the later pages happen to echo.

The margin belongs to the embedding model: it was chosen for WordLlama on part of the
evaluation set (the issue-16 files and ``cases.txt``) and judged on the rest
(``cases_new.txt``, ``cases_sem.txt``); figures in tests/bench/bench_spoilers.py. A library
whose vectors come from a model without a margin here gets no semantic test (the lexical
decision stands), as does a book whose vectors are not there yet.

Cost: no wait at the first question. ``BookMeaning.request`` loads a book's vectors in a
background thread once the embedding model is in memory (search by meaning loads it at the
first search; the check never starts that load during an answer); until then the check is
lexical. Once ready, a sentence costs one embedding (a mean of token vectors, well under a
millisecond) and a dot product with the book's few hundred chunk vectors.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import peewee as pw

log = logging.getLogger("margin.agent.spoilers")

# The margin per embedding model (core.search.vectors.MODEL): a later chunk this much closer in
# cosine than anything read holds a doubtful sentence back.
MARGINS = {"wordllama-l2-supercat": 0.10}
CACHED_BOOKS = 8
RETRY_S = 30.0  # a book without vectors yet is looked at again after this long


@dataclass(frozen=True)
class Meaning:
    """A book's chunk vectors (unit rows) with each chunk's first and last page."""

    matrix: Any  # np.ndarray (chunks, dims), float32
    start_pages: Any  # np.ndarray (chunks,)
    end_pages: Any  # np.ndarray (chunks,)
    margin: float

    def gap(self, sentence: str, read_to: int, read: Sequence[str] = ()) -> float | None:
        """How much closer the nearest chunk after ``read_to`` is to ``sentence`` than the
        nearest chunk within it or any text of ``read``; None when one side is empty."""
        from core.search.embedding import VectorsUnavailable, embed

        try:
            vectors = embed([sentence, *read])
        except VectorsUnavailable:
            return None
        wanted = vectors[0]
        if not wanted.any():
            return None  # no word the model knows
        cosines = self.matrix @ wanted
        later = cosines[self.start_pages > read_to]
        within = cosines[self.end_pages <= read_to]
        if not len(later):
            return None
        best_read = max(
            float(within.max()) if len(within) else -1.0,
            float((vectors[1:] @ wanted).max()) if len(read) else -1.0,
        )
        return float(later.max()) - best_read


def model_loaded() -> bool:
    """Whether the embedding model is in memory already (search by meaning loads it at the
    first search). Loading it (about 0.5-1 s, much of it Python holding the interpreter
    lock) is never started by an answer's check: it would stall the answer's streaming."""
    from core.search import embedding

    return embedding._model is not None


def load(db: pw.SqliteDatabase, book_id: int) -> Meaning | None:
    """A book's stored chunk vectors and pages; None when the book has none (yet), the
    vectors' model has no margin here, or the model cannot be loaded."""
    import numpy as np

    from core.search.embedding import VectorsUnavailable, _load_model
    from core.search.vectors import MODEL, BookVectors

    margin = MARGINS.get(MODEL)
    if margin is None:
        return None
    row = db.execute_sql(
        "SELECT min(id), max(id) FROM chunk WHERE book_id = ?", (book_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return None
    stored = BookVectors(db)._stored(book_id)  # checked against the book's current chunks
    if stored is None or stored.first_chunk != int(row[0]):
        return None
    pages = db.execute_sql(
        "SELECT start_page, end_page FROM chunk WHERE book_id = ? ORDER BY id", (book_id,)
    ).fetchall()
    if len(pages) != stored.count:
        return None
    try:
        _load_model()  # here, in the background: never at a sentence
    except VectorsUnavailable:
        return None
    return Meaning(
        stored.matrix,
        np.array([int(p[0]) for p in pages]),
        np.array([int(p[1]) for p in pages]),
        margin,
    )


class BookMeaning:
    """Per (library, book): the ``Meaning``, loaded once in a background thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, int, int], Meaning | None] = {}
        self._loading: dict[tuple[str, int, int], threading.Thread] = {}
        self._missing: dict[tuple[str, int, int], float] = {}  # when a book had no vectors yet

    def get(self, db: pw.SqliteDatabase | None, book_id: int) -> Meaning | None:
        """The book's meaning when it is ready, at once; otherwise None, and a background
        thread starts loading it (``request``)."""
        if db is None:
            return None
        key = _key(db, book_id)
        with self._lock:
            if key in self._items:
                return self._items[key]
        self.request(db, book_id)
        return None

    def request(
        self, db: pw.SqliteDatabase, book_id: int, *, load_model: bool = False
    ) -> threading.Thread | None:
        """Start loading the book's meaning in the background (once). Unless ``load_model``,
        only once the embedding model is in memory (``model_loaded``)."""
        if not load_model and not model_loaded():
            return None
        key = _key(db, book_id)
        with self._lock:
            if key in self._items:
                return None
            thread = self._loading.get(key)
            if thread is not None:
                return thread
            if time.monotonic() - self._missing.get(key, -RETRY_S) < RETRY_S:
                return None  # asked again a little later: its vectors are being made
            thread = threading.Thread(
                target=self._load, args=(db, book_id, key), name="spoiler-meaning", daemon=True
            )
            self._loading[key] = thread
        thread.start()
        return thread

    def wait(self, db: pw.SqliteDatabase, book_id: int, timeout: float | None = None) -> None:
        """Load the book's meaning now, the embedding model too (tests, the benchmark)."""
        thread = self.request(db, book_id, load_model=True)
        if thread is not None:
            thread.join(timeout)

    def forget(self, db: pw.SqliteDatabase, book_id: int) -> None:
        """Drop what is known of a book (its vectors were written or changed)."""
        key = _key(db, book_id)
        with self._lock:
            self._items.pop(key, None)
            self._missing.pop(key, None)

    def _load(self, db: pw.SqliteDatabase, book_id: int, key: tuple[str, int, int]) -> None:
        meaning: Meaning | None = None
        try:
            meaning = load(db, book_id)
        except (pw.DatabaseError, OSError, ValueError):
            log.warning("book %s: no semantic spoiler test (lexical only)", book_id, exc_info=True)
        with self._lock:
            self._loading.pop(key, None)
            # a book whose vectors are not there yet is asked again at a later answer
            if meaning is not None:
                self._items[key] = meaning
                while len(self._items) > CACHED_BOOKS:
                    del self._items[next(iter(self._items))]  # the oldest
            else:
                self._missing[key] = time.monotonic()


def _key(db: pw.SqliteDatabase, book_id: int) -> tuple[str, int, int]:
    """The library, the book and its first chunk (a re-read book has new chunks)."""
    row = db.execute_sql("SELECT min(id) FROM chunk WHERE book_id = ?", (book_id,)).fetchone()
    return str(db.database), book_id, int(row[0]) if row and row[0] is not None else -1


MEANINGS = BookMeaning()  # one per process: the vectors are the library's, read-only here
