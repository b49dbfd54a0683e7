"""Vectors computed in the background: one thread per library (``VectorIndexer``) that gives
books their vectors, both kinds side by side (the static ``vectors.BookVectors`` of every
book, and the sentence encoder's ``sentence_vectors.SentenceVectors`` of the books asked for,
their reader's part first), in one worker process (``vector_worker``, a plain Python
process: no ``multiprocessing`` resource tracker beside it) when one can be started.
``request_vectors`` wakes it after an import; ``want`` asks for a book's encoder vectors."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import peewee as pw

from core.domain.book import ChunkContent
from core.processes import PythonWorker
from core.search.embedding import VectorsUnavailable
from core.search.encoder_files import weights_present
from core.search.sentence_vectors import (
    AHEAD_PAGES,
    DEEP_VECTORS_ENV,
    SentenceVectors,
    is_wanted,
    mark_ahead,
    mark_wanted,
)
from core.search.vector_worker import FLAG
from core.search.vectors import BookVectors
from core.store.migrations import SCHEMA_VERSION, current_version

log = logging.getLogger("margin.search.vectors")

QUIET_S = 1.0  # background indexing waits for imports to pause this long
IDLE_S = 10.0  # then its thread ends after this long with nothing to do
RELOOK_S = 2.0  # while a worker runs, a request is looked into this often at most


class VectorIndexer:
    """One background thread per library that gives books their vectors: a book just
    imported or read again, and every book of a library from before vectors (its search is
    BM25 alone until then). ``request()`` wakes it and returns at once, so an import takes
    no longer than before; listeners hear ``(done, total)`` after each book."""

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._worker: PythonWorker | None = None  # the worker process while one runs
        self._warm: PythonWorker | None = None  # one started ahead of an import (``warm``)
        self._lock = threading.Lock()
        self.listeners: list[Callable[[int, int], None]] = []

    def request(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._idle.clear()
            self._wake.set()
            if self._warm is not None:  # an import is stored: the worker started for it begins
                self._warm.send({"go": True})
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="margin-vectors", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Until nothing is left to index (True), or ``timeout`` seconds (False)."""
        return self._idle.wait(timeout)

    def stop(self, *, wait: bool = True) -> None:
        """Stop for good; ``wait=False`` (a library closing, or a process about to end without
        its interpreter's teardown) ends the worker process at once, and waits only for it to
        be gone, instead of joining the thread."""
        with self._lock:
            self._stopped = True
            self._wake.set()
            worker = self._worker
        self.cool()
        if not wait:
            if worker is not None and worker.is_alive():
                worker.terminate()  # never left running after Margin has gone
                # and gone before the caller goes on: its connection would otherwise hold
                # the library a moment longer (a migration's VACUUM then finds it locked)
                worker.join(timeout=2)
            return
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _current(self) -> bool:
        """The library is there and at this version's schema (not removed, not being
        migrated or rebuilt by someone else)."""
        if not Path(str(self.db.database)).exists():
            return False
        return current_version(self.db) == SCHEMA_VERSION

    def warm(self, texts: list[str]) -> None:
        """A book is being imported and will be opened: start the worker now (its imports
        and models load while the book is stored) to encode ``texts``, the book's first
        chunks (its reader's part), from the moment it is stored (the import's ``request``)
        instead of once the window opens it; the round after the import gives it its jobs
        (``_index``). Nothing when a worker runs already."""
        with self._lock:
            if self._stopped or self._worker is not None:
                return
            if self._warm is not None and self._warm.is_alive():
                return
            try:
                self._warm = self._start({"warm": texts})
            except OSError:
                log.info("no vectors worker ahead of the import", exc_info=True)

    def cool(self) -> None:
        """The import that ``warm`` was for failed: its worker ends."""
        with self._lock:
            warm, self._warm = self._warm, None
        if warm is not None:
            warm.terminate()
            warm.join(timeout=2)

    def _start(self, job: dict[str, object]) -> PythonWorker:
        """A worker process for this library (``vector_worker``), given ``job`` first; its
        input stays open for more (``PythonWorker.send``)."""
        header = {"path": str(self.db.database), "parent": os.getpid()}
        return PythonWorker("core.search.vector_worker", FLAG, header | job, more=True)

    def _jobs(
        self, kinds: tuple[BookVectors, ...], skip: dict[str, list[int]] | None = None
    ) -> dict[str, tuple[list[int], list[int]]]:
        """By kind: the books lacking those vectors (but those in ``skip``), and which of
        them need only their reader's part (encoder vectors)."""
        jobs: dict[str, tuple[list[int], list[int]]] = {}
        for vectors in kinds:
            books = [b for b in vectors.missing() if b not in (skip or {}).get(vectors.kind, ())]
            if books:
                only = vectors.reader_only(books) if isinstance(vectors, SentenceVectors) else []
                jobs[vectors.kind] = (books, only)
        return jobs

    def _index(self, kinds: tuple[BookVectors, ...]) -> None:
        """Every book that lacks vectors of each kind, in one worker process when one can be
        started (the models' memory and CPU stay out of this process; the one ``warm``
        started, if any), else here. Leaving Margin ends the worker (``stop``), and so does
        this process's death (the worker watches its parent)."""
        jobs = self._jobs(kinds)
        if not jobs:
            self.cool()  # (an import whose book was there already)
            return
        with self._lock:
            if self._stopped:
                return
            worker, self._warm = self._warm, None
            # under the lock: ``stop`` never sees a worker half started
            if worker is None or not worker.send(_wire(jobs)):
                if worker is not None:
                    worker.terminate()
                try:
                    worker = self._start(_wire(jobs))
                except OSError:  # no worker process here: compute in this one
                    log.info("vectors computed in this process", exc_info=True)
                    worker = None
            self._worker = worker
        if worker is None:
            for vectors in kinds:
                if vectors.kind in jobs:
                    books, only = jobs[vectors.kind]
                    self._index_here(vectors, books, tuple(only))
            return
        log.info("vectors worker %d: %s", worker.pid, {k: len(b) for k, (b, _) in jobs.items()})
        self._listen(worker, kinds, jobs)

    def _listen(
        self,
        worker: PythonWorker,
        kinds: tuple[BookVectors, ...],
        jobs: dict[str, tuple[list[int], list[int]]],
    ) -> None:
        """The worker's messages until it is done (or stopped). A book asked for meanwhile is
        sent to it as one more job, unless the worker is busy with a whole book's encoder
        vectors (minutes): it is then ended, to start again with the new book's reader's part
        first. Progress is the static vectors' (search by meaning), then the encoder's."""
        todo = {kind: list(books) for kind, (books, _) in jobs.items()}
        done: dict[str, set[int]] = {kind: set() for kind in todo}
        books, only = jobs.get("sentence", ([], []))
        whole = set(books) - set(only)  # books whose encoder vectors are wanted whole
        unavailable: set[str] = set()
        interrupted = False
        looked = 0.0

        def left() -> int:
            return sum(
                len(todo[kind]) - len(done[kind]) for kind in todo if kind not in unavailable
            )

        try:
            while left() > 0 and not self._stopped:
                try:
                    message = worker.receive(0.5)
                except EOFError:  # the worker ended
                    break
                if message is None:
                    if self._wake.is_set() and time.monotonic() - looked > RELOOK_S:
                        # (the wake stays set: what cannot be sent now, a book's whole
                        # encoder vectors where its reader's part was asked, comes next round)
                        looked = time.monotonic()
                        more = self._jobs(kinds, todo) if self._current() else {}
                        if "sentence" in more and whole - done.get("sentence", set()):
                            interrupted = True  # a book's reader's part waits for no whole book
                            break
                        if more and not worker.send(_wire(more)):
                            interrupted = True
                            break
                        for kind, (books, only) in more.items():
                            todo.setdefault(kind, []).extend(books)
                            done.setdefault(kind, set())
                            if kind == "sentence":
                                whole |= set(books) - set(only)
                    continue
                if not isinstance(message, list) or not message:
                    continue
                if message[0] == "log" and len(message) == 3:
                    log.log(int(message[1]), "%s", message[2])
                    continue
                if message[0] != "done" or len(message) != 4:
                    continue
                _, kind, book_id, outcome = message
                if kind not in done or kind in unavailable:
                    continue
                done[kind].add(book_id)
                if outcome != "ok":
                    log.warning("vectors of book %s: %s", book_id, outcome)
                if outcome == "unavailable":  # no more of this kind from this worker
                    unavailable.add(kind)
                static_left = len(done.get("static", ())) < len(todo.get("static", ()))
                if kind == "static" or not static_left:
                    self._report(len(done[kind]), len(todo[kind]))
        finally:
            self._worker = None
            worker.close_input()  # done: it ends
            if interrupted or self._stopped:
                worker.terminate()
                self._wake.set()  # (another round, the new book first)
            worker.join(timeout=1 if self._stopped or interrupted else 5)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=1)

    def _index_here(
        self, vectors: BookVectors, todo: list[int], only: tuple[int, ...] = ()
    ) -> None:
        for n, book_id in enumerate(todo, 1):
            if self._stopped:
                return
            try:
                if book_id in only and isinstance(vectors, SentenceVectors):
                    vectors.index_book(book_id, reader_first=True)
                else:
                    vectors.index_book(book_id)
            except VectorsUnavailable:
                return
            except (pw.OperationalError, pw.IntegrityError, sqlite3.Error) as exc:
                log.warning("vectors of book %s not stored (tried again later): %s", book_id, exc)
            self._report(n, len(todo))

    def _report(self, done: int, total: int) -> None:
        for listener in list(self.listeners):
            try:
                listener(done, total)
            except Exception:
                log.warning("a vectors progress listener failed", exc_info=True)

    def _run(self) -> None:
        # the static vectors of every book (seconds) and the sentence encoder's (about 0.1 s
        # a chunk: minutes for a long book, its reader's part first) in one worker
        kinds = (BookVectors(self.db), SentenceVectors(self.db))
        while not self._stopped:
            if not self._wake.wait(IDLE_S):
                with self._lock:  # nothing asked for a while: end; request() starts anew
                    if not self._wake.is_set():
                        self._thread = None
                        break
            self._wake.clear()
            # a batch of imports first: start once they have paused for QUIET_S
            while not self._stopped and self._wake.wait(QUIET_S):
                self._wake.clear()
            if self._stopped:
                break
            try:
                if self._current() and not self._stopped:
                    self._index(kinds)
            except Exception:  # a closed or damaged library: search stays BM25 alone
                log.warning("background vectors stopped", exc_info=True)
            finally:
                if not self.db.is_closed():
                    self.db.close()  # this thread's own connection
            if not self._wake.is_set():
                self._idle.set()
        if self._stopped:
            self._idle.set()


def _wire(jobs: dict[str, tuple[list[int], list[int]]]) -> dict[str, object]:
    """``VectorIndexer._jobs`` as the worker reads them (``vector_worker.run_jobs``)."""
    return {
        "jobs": [
            {"kind": kind, "books": books, "reader_only": only}
            for kind, (books, only) in jobs.items()
        ]
    }


_indexers: dict[int, VectorIndexer] = {}
_indexers_lock = threading.Lock()


def indexer_for(db: pw.SqliteDatabase) -> VectorIndexer:
    """The library's one background indexer."""
    with _indexers_lock:
        indexer = _indexers.get(id(db))
        if indexer is None or indexer.db is not db:
            indexer = _indexers[id(db)] = VectorIndexer(db)
        return indexer


def stop_all_now() -> None:
    """Every library's background vectors stopped and their worker processes ended, without
    waiting (``margin ask`` ends with ``os._exit``, which skips multiprocessing's own clean-up
    of daemon processes: a worker would outlive it, writing to the library)."""
    with _indexers_lock:
        indexers = list(_indexers.values())
    for indexer in indexers:
        indexer.stop(wait=False)


def stop_for(db: pw.SqliteDatabase) -> None:
    """The library ``db`` closes: its background vectors stop and their worker ends now
    (vectors are derived data: whatever is missing is asked for again next time)."""
    with _indexers_lock:
        indexer = _indexers.pop(id(db), None)
    if indexer is not None and indexer.db is db:
        indexer.stop(wait=False)


def request_vectors(db: pw.SqliteDatabase) -> None:
    """Have the books of this library that lack vectors get them in the background (never
    in a library opened read-only: nothing could be saved; never in a short command, which
    would end the worker before it stored anything: the next search or window asks again)."""
    if getattr(db, "margin_read_only", False) or getattr(db, "margin_no_background", False):
        return
    indexer_for(db).request()


def warm_for_import(db: object, chunks: Sequence[ChunkContent]) -> None:
    """A book being imported (its ``chunks`` just cut) that the window opens next: its
    vectors worker starts now, and encodes the chunks of its reader's part (the first
    ``AHEAD_PAGES`` pages: its ``read_to`` is 0) from the moment the book is stored, not
    once the window has opened it and the round after the import has begun (issue 41). Not
    in a short command nor a read-only library (nothing could be stored); the encoder's part
    not without its weights or with ``MARGIN_DEEP_VECTORS=0``."""
    if not isinstance(db, pw.SqliteDatabase):  # ``margin import``'s plain connection
        return
    if getattr(db, "margin_read_only", False) or getattr(db, "margin_no_background", False):
        return
    texts: list[str] = []
    if weights_present() and os.environ.get(DEEP_VECTORS_ENV) != "0":
        texts = [c.text for c in chunks if c.start_page <= AHEAD_PAGES]
    indexer_for(db).warm(texts)


def cool_for(db: object) -> None:
    """The import ``warm_for_import`` started a worker for failed: the worker ends."""
    with _indexers_lock:
        indexer = _indexers.get(id(db))
    if indexer is not None and indexer.db is db:
        indexer.cool()


def want(db: pw.SqliteDatabase, book_id: int) -> None:
    """Have the book's encoder vectors computed in the background (when they are missing):
    its answers are searched deeply from then on. ``MARGIN_DEEP_VECTORS=0`` turns this
    off (the encoder's vectors cost minutes of CPU per novel: a laptop on battery, the test
    suite); deep search then stays the hybrid search for books without them."""
    if mark_wanted(db, book_id):
        request_vectors(db)


def want_soon(db: pw.SqliteDatabase, book_id: int) -> None:
    """A question on this book was just asked: its encoder vectors are asked for now (once
    a session), not when the agent's first deep search comes a few seconds later. Cheap
    (no numpy, no database read); nothing when the weights are not there."""
    if not is_wanted(db, book_id) and weights_present():
        want(db, book_id)


def want_ahead(db: pw.SqliteDatabase, book_id: int) -> None:
    """A book was imported or opened: the encoder's vectors of its reader's part (up to
    ``sentence_vectors.AHEAD_PAGES`` past ``read_to``, where its next questions go) are
    computed in the background from now, before any question (issue 41); the rest of the
    book waits for a question (``want_soon``). Cheap: no numpy, no database read."""
    if weights_present() and mark_ahead(db, book_id):
        request_vectors(db)
