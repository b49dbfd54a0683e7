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

Two models (issue 23, fourth session): WordLlama's static vectors (every book, made after the
import) and the sentence encoder's (MiniLM, ``core.search.sentence_vectors``: made for the
books deep search was asked about). The check uses WordLlama's (``PREFERENCE``: it catches
more on the judge set and costs nothing on the window's thread, see ``MARGINS``). A
``BookMeaning`` given both serves a book by the first model in memory whose vectors it has,
and looks again once a preferred model is loaded. With MiniLM a sentence costs one encoding
(the question and selection once per answer); the passages the answer used are pages within
the bound, counted as read through their stored chunk vectors.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import peewee as pw

log = logging.getLogger("margin.agent.spoilers")

# The margin per embedding model: a later chunk this much closer in cosine than anything read
# holds a doubtful sentence back. Chosen on the tune files, judged on the others
# (tests/bench/bench_spoiler_meaning.py). MiniLM's 0.10: the fewest false alarms on tune with
# the most caught (0.08: 1.8 %, 0.10-0.14: 1.3 %). On the judge set it catches fewer plain-word
# leaks than WordLlama (69.7 % against 75.0 %, lexical 64.5 %, false alarms 1.4 % for all
# three), and it costs an encoding a sentence (5 ms on two idle cores, far more on a busy
# machine) where the check runs: the answer's coroutine, on the window's thread. So the check
# uses WordLlama alone (``PREFERENCE``); MiniLM is measured, and ready for a check that runs
# off that thread (``BookMeaning((MINILM, STATIC))``).
STATIC = "wordllama-l2-supercat"  # core.search.vectors.MODEL (search by meaning)
MINILM = "all-MiniLM-L6-v2"  # core.search.sentence_vectors.MODEL (deep search)
MARGINS = {STATIC: 0.10, MINILM: 0.10}
PREFERENCE = (STATIC,)  # the first whose vectors the book has and whose model is loaded
CACHED_BOOKS = 8
RETRY_S = 30.0  # a book without vectors yet is looked at again after this long
READ_CHARS = 1000  # of a question or selection, encoded once (the encoder reads 256 tokens)


@dataclass(frozen=True)
class Meaning:
    """A book's chunk vectors (unit rows) with each chunk's first and last page, and the
    model they come from."""

    matrix: Any  # np.ndarray (chunks, dims), float32
    start_pages: Any  # np.ndarray (chunks,)
    end_pages: Any  # np.ndarray (chunks,)
    margin: float
    model: str = STATIC

    def _vectors(self, sentence: str, read: Sequence[str], passages: Sequence[str]) -> Any:
        """Unit vectors of the sentence and the texts read (first row: the sentence); None
        when the model cannot embed. WordLlama embeds everything (well under a millisecond);
        the sentence encoder (about 5 ms a sentence, 0.2 s or more a passage) embeds the
        question and selection once each and leaves the passages the answer used out: they
        are pages within the bound, whose stored chunk vectors count as read already."""
        import numpy as np

        if self.model == MINILM:
            return np.vstack([_encoded(sentence), *(_encoded(t[:READ_CHARS]) for t in read)])
        from core.search.embedding import VectorsUnavailable, embed

        try:
            return embed([sentence, *read, *passages])
        except VectorsUnavailable:
            return None

    def gap(
        self,
        sentence: str,
        read_to: int,
        read: Sequence[str] = (),
        passages: Sequence[str] = (),
    ) -> float | None:
        """How much closer the nearest chunk after ``read_to`` is to ``sentence`` than the
        nearest chunk within it or any text of ``read`` (the question, the selection) and
        ``passages`` (those the answer used); None when one side is empty."""
        vectors = self._vectors(sentence, read, passages)
        if vectors is None:
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
            float((vectors[1:] @ wanted).max()) if len(vectors) > 1 else -1.0,
        )
        return float(later.max()) - best_read


@functools.lru_cache(maxsize=256)
def _encoded(text: str) -> Any:
    """The sentence encoder's unit vector of ``text`` (loaded already: ``load`` saw to it),
    remembered: a question is encoded once for all the sentences of its answer."""
    from core.search.encoder import load_encoder

    encoder = load_encoder()
    if encoder is None:  # the weights went away after the book's meaning was loaded
        raise ValueError("the sentence encoder is not there")
    return encoder.encode([text])[0]


def model_loaded(model: str = STATIC) -> bool:
    """Whether ``model`` is in memory already (search by meaning loads WordLlama at the first
    search, deep search the sentence encoder). Loading one (0.3-1 s, much of it Python
    holding the interpreter lock) is never started by an answer's check: it would stall the
    answer's streaming."""
    if model == MINILM:
        encoder = sys.modules.get("core.search.encoder")  # never imported here
        return encoder is not None and getattr(encoder, "_loaded", None) is not None
    embedding = sys.modules.get("core.search.embedding")
    return embedding is not None and getattr(embedding, "_model", None) is not None


def load(
    db: pw.SqliteDatabase,
    book_id: int,
    models: Sequence[str] = PREFERENCE,
    *,
    load_model: bool = False,
) -> Meaning | None:
    """A book's stored chunk vectors and pages from the first of ``models`` that has a
    margin, whose vectors the book has, and whose model is in memory (or, with
    ``load_model``, loads; here, in the background: never at a sentence); None when none."""
    import numpy as np

    row = db.execute_sql(
        "SELECT min(id), max(id) FROM chunk WHERE book_id = ?", (book_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return None
    pages = db.execute_sql(
        "SELECT start_page, end_page FROM chunk WHERE book_id = ? ORDER BY id", (book_id,)
    ).fetchall()
    for model in models:
        margin = MARGINS.get(model)
        if margin is None or not (load_model or model_loaded(model)):
            continue
        stored = _stored(db, book_id, model)
        if stored is None or stored.first_chunk != int(row[0]) or len(pages) != stored.count:
            continue  # checked against the book's current chunks
        if not _load_model(model):
            continue
        return Meaning(
            stored.matrix,
            np.array([int(p[0]) for p in pages]),
            np.array([int(p[1]) for p in pages]),
            margin,
            model,
        )
    return None


def _stored(db: pw.SqliteDatabase, book_id: int, model: str) -> Any:
    if model == MINILM:
        from core.search.sentence_vectors import MODEL, SentenceVectors

        return SentenceVectors(db)._stored(book_id) if MODEL == MINILM else None
    from core.search.vectors import MODEL, BookVectors

    return BookVectors(db)._stored(book_id) if model == MODEL else None


def _load_model(model: str) -> bool:
    if model == MINILM:
        from core.search.encoder import load_encoder

        return load_encoder() is not None
    from core.search.embedding import VectorsUnavailable
    from core.search.embedding import _load_model as load_static

    try:
        load_static()
    except VectorsUnavailable:
        return False
    return True


class BookMeaning:
    """Per (library, book): the ``Meaning``, loaded once in a background thread, from the
    first of ``models`` it can (``load``). A book known by a later model is looked at again
    (every ``RETRY_S``) once an earlier one's model is in memory: deep search may have made
    its sentence vectors since."""

    def __init__(self, models: Sequence[str] = PREFERENCE) -> None:
        self.models = tuple(models)
        self._lock = threading.Lock()
        self._items: dict[tuple[str, int, int], Meaning | None] = {}
        self._loading: dict[tuple[str, int, int], threading.Thread] = {}
        self._missing: dict[tuple[str, int, int], float] = {}  # when a book was last looked at

    def get(self, db: pw.SqliteDatabase | None, book_id: int) -> Meaning | None:
        """The book's meaning when it is ready, at once; otherwise None, and a background
        thread starts loading it (``request``)."""
        if db is None:
            return None
        key = _key(db, book_id)
        with self._lock:
            item = self._items.get(key)
        if item is None or self._better(item):
            self.request(db, book_id)
        return item

    def _better(self, item: Meaning) -> bool:
        """Whether a model preferred to ``item``'s is in memory (worth looking again)."""
        if item.model not in self.models:
            return False
        return any(model_loaded(m) for m in self.models[: self.models.index(item.model)])

    def request(
        self, db: pw.SqliteDatabase, book_id: int, *, load_model: bool = False
    ) -> threading.Thread | None:
        """Start loading the book's meaning in the background (once; again every
        ``RETRY_S`` while it is missing or a preferred model may serve it). Unless
        ``load_model``, only once one of the models is in memory (``model_loaded``)."""
        if not load_model and not any(model_loaded(m) for m in self.models):
            return None
        key = _key(db, book_id)
        with self._lock:
            item = self._items.get(key)
            if item is not None and not (load_model or self._better(item)):
                return None
            thread = self._loading.get(key)
            if thread is not None:
                return thread
            if time.monotonic() - self._missing.get(key, -RETRY_S) < RETRY_S:
                return None  # asked again a little later: its vectors are being made
            thread = threading.Thread(
                target=self._load,
                args=(db, book_id, key, load_model),
                name="spoiler-meaning",
                daemon=True,
            )
            self._loading[key] = thread
        thread.start()
        return thread

    def wait(self, db: pw.SqliteDatabase, book_id: int, timeout: float | None = None) -> None:
        """Load the book's meaning now, the models too (tests, the benchmark)."""
        thread = self.request(db, book_id, load_model=True)
        if thread is not None:
            thread.join(timeout)

    def retuned(self, margin: float) -> BookMeaning:
        """The meanings loaded so far with another margin (the benchmark's choice of one)."""
        out = BookMeaning(self.models)
        with self._lock:
            out._items = {k: replace(v, margin=margin) for k, v in self._items.items() if v}
        return out

    def forget(self, db: pw.SqliteDatabase, book_id: int) -> None:
        """Drop what is known of a book (its vectors were written or changed)."""
        key = _key(db, book_id)
        with self._lock:
            self._items.pop(key, None)
            self._missing.pop(key, None)

    def _load(
        self, db: pw.SqliteDatabase, book_id: int, key: tuple[str, int, int], load_model: bool
    ) -> None:
        meaning: Meaning | None = None
        try:
            meaning = load(db, book_id, self.models, load_model=load_model)
        except (pw.DatabaseError, OSError, ValueError):
            log.warning("book %s: no semantic spoiler test (lexical only)", book_id, exc_info=True)
        with self._lock:
            self._loading.pop(key, None)
            old = self._items.get(key)
            if meaning is not None and (old is None or _rank(self, meaning) <= _rank(self, old)):
                self._items[key] = meaning
                while len(self._items) > CACHED_BOOKS:
                    del self._items[next(iter(self._items))]  # the oldest
            if meaning is None or self._better(meaning):
                # not there yet, or known by a later model: looked at again a little later
                self._missing[key] = time.monotonic()


def _rank(meanings: BookMeaning, item: Meaning) -> int:
    return meanings.models.index(item.model) if item.model in meanings.models else 99


def _key(db: pw.SqliteDatabase, book_id: int) -> tuple[str, int, int]:
    """The library, the book and its first chunk (a re-read book has new chunks)."""
    row = db.execute_sql("SELECT min(id) FROM chunk WHERE book_id = ?", (book_id,)).fetchone()
    return str(db.database), book_id, int(row[0]) if row and row[0] is not None else -1


MEANINGS = BookMeaning()  # one per process: the vectors are the library's, read-only here
