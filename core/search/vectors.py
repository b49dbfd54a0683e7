"""Dense vectors of a book's chunks, for search by meaning beside BM25.

The model (``core.search.embedding``) is WordLlama's static embedding, loaded the first time
a vector is needed. A book's vectors are one row of ``chunk_vectors``
(schema: core/store/migrations.py): int8 numbers, ``dims`` per chunk, for the book's chunk
ids ``first_chunk`` … ``first_chunk + count - 1`` in order (a book's chunks are written in
one transaction, so their ids are contiguous). When the book's chunks change (a re-read),
the row no longer matches them and counts as missing until the book is embedded again;
deleting the book deletes the row (foreign key).

Searching one book is a dot product over its few hundred vectors with numpy (well under a
millisecond); the decoded matrix of the last few books searched is kept in memory.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import peewee as pw

from core.search.embedding import (  # re-exported: the model's names, where callers know them
    DIMS,
    MODEL,
    VectorsUnavailable,
    embed,
    pack,
    unpack,
)

__all__ = ["DIMS", "MODEL", "BookVectors", "VectorsUnavailable", "embed", "pack", "unpack"]

log = logging.getLogger("margin.search.vectors")

CACHED_BOOKS = 8
QUIET_S = 1.0  # background indexing waits for imports to pause this long
IDLE_S = 10.0  # then its thread ends after this long with nothing to do
RELOOK_S = 2.0  # while a worker runs, a request is looked into this often at most


@dataclass(frozen=True)
class _Stored:
    first_chunk: int
    count: int
    matrix: Any  # np.ndarray, float32 unit rows


class BookVectors:
    """The vectors of the library's books: written after an import, searched per book.
    A subclass names another model, its table and its ``embed`` (``sentence_vectors.py``)."""

    table = "chunk_vectors"
    model = MODEL
    dims = DIMS
    kind = "static"  # the worker process's name for this class (``_index_in_worker``)

    def _embed(self, texts: list[str]) -> Any:
        return embed(texts)

    def available(self) -> bool:
        """Whether the model can be there at all (without loading it)."""
        return True

    def _pack(self, matrix: Any) -> bytes:
        return pack(matrix)

    def _unpack(self, blob: bytes) -> Any:
        return unpack(blob, self.dims)

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db
        self._cache: OrderedDict[int, _Stored] = OrderedDict()
        self._lock = threading.Lock()

    # --- writing ---------------------------------------------------------------------------

    def _chunks(self, book_id: int) -> tuple[list[int], list[str]]:
        rows = self.db.execute_sql(
            "SELECT c.id, t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
            "WHERE c.book_id = ? ORDER BY c.id",
            (book_id,),
        ).fetchall()
        return [int(r[0]) for r in rows], [str(r[1]) for r in rows]

    def index_book(self, book_id: int) -> bool:
        """Compute and store the vectors of a book's chunks; False when it has none (or its
        chunks are not contiguous, which a healthy library never has)."""
        from core.search.frontmatter import is_front_matter

        ids, texts = self._chunks(book_id)
        if not ids or ids[-1] - ids[0] + 1 != len(ids):
            return False
        matrix = self._embed(texts)
        for row, text in enumerate(texts):
            if is_front_matter(text):
                matrix[row] = 0  # never near a question
        blob = self._pack(matrix)
        # IMMEDIATE: take the write lock first (waiting for an import's transaction), never
        # upgrade a read to a write, which SQLite refuses at once when another writer is on
        with self.db.atomic("IMMEDIATE"):
            current = self.db.execute_sql(
                "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book_id,)
            ).fetchone()
            if current is None or (current[0], current[1]) != (ids[0], len(ids)):
                return False  # the book was re-read or deleted meanwhile
            self.db.execute_sql(
                f"INSERT OR REPLACE INTO {self.table} (book_id, model, dims, first_chunk, count,"
                " data) VALUES (?, ?, ?, ?, ?, ?)",
                (book_id, self.model, self.dims, ids[0], len(ids), blob),
            )
        with self._lock:
            self._cache.pop(book_id, None)
        return True

    def missing(self) -> list[int]:
        """Ready books whose vectors are missing or no longer match their chunks."""
        if not self.available():
            return []
        return self._stale()

    def _stale(self, also: str = "") -> list[int]:
        """Ready books with no row in the table, or one of another model, size or chunk range
        (or matching ``also``, an SQL condition on the row ``v``)."""
        rows = self.db.execute_sql(
            "SELECT b.id FROM book b "
            "JOIN (SELECT book_id, min(id) AS first, count(*) AS n FROM chunk GROUP BY book_id)"
            " c ON c.book_id = b.id "
            f"LEFT JOIN {self.table} v ON v.book_id = b.id "
            "WHERE b.status = 'ready' AND (v.book_id IS NULL OR v.model != ? OR v.dims != ?"
            f" OR v.first_chunk != c.first OR v.count != c.n{also}) ORDER BY b.id",
            (self.model, self.dims),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def index_missing(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> int:
        """Give every book without (current) vectors its vectors, one book at a time, for an
        existing library in the background; ``progress(done, total)`` after each book.
        Returns how many books were indexed. Stops early when ``cancelled()``."""
        todo = self.missing()
        done = 0
        for n, book_id in enumerate(todo, 1):
            if cancelled is not None and cancelled():
                break
            try:
                if self.index_book(book_id):
                    done += 1
            except VectorsUnavailable:
                break
            except (pw.OperationalError, pw.IntegrityError) as exc:
                log.warning("vectors of book %s not stored (tried again later): %s", book_id, exc)
            if progress is not None:
                progress(n, len(todo))
        return done

    # --- searching -------------------------------------------------------------------------

    def _stored(self, book_id: int) -> _Stored | None:
        with self._lock:
            hit = self._cache.get(book_id)
            if hit is not None:
                self._cache.move_to_end(book_id)
        row = self.db.execute_sql(
            "SELECT v.first_chunk, v.count, c.first, c.n, "
            "CASE WHEN v.first_chunk = c.first AND v.count = c.n AND v.model = ? AND v.dims = ?"
            " THEN 1 ELSE 0 END "
            f"FROM {self.table} v, (SELECT min(id) AS first, count(*) AS n FROM chunk "
            "WHERE book_id = ?) c WHERE v.book_id = ?",
            (self.model, self.dims, book_id, book_id),
        ).fetchone()
        if row is None or not row[4]:
            return None
        if hit is not None and (hit.first_chunk, hit.count) == (row[0], row[1]):
            return hit
        blob = self.db.execute_sql(
            f"SELECT data FROM {self.table} WHERE book_id = ?", (book_id,)
        ).fetchone()
        if blob is None:
            return None
        stored = _Stored(int(row[0]), int(row[1]), self._unpack(bytes(blob[0])))
        return self._remember(self._cache, book_id, stored)

    def _remember(self, cache: OrderedDict[int, Any], book_id: int, stored: Any) -> Any:
        """Keep ``stored`` in ``cache`` (the most recent ``CACHED_BOOKS`` books); it back."""
        with self._lock:
            cache[book_id] = stored
            while len(cache) > CACHED_BOOKS:
                cache.popitem(last=False)
        return stored

    def has(self, book_id: int) -> bool:
        return self._stored(book_id) is not None

    def cosines(self, book_id: int, query: str, rowids: tuple[int, int]) -> tuple[int, Any] | None:
        """How close in meaning to ``query`` each chunk of the book within ``rowids`` is:
        (the first chunk's id, their cosines in chunk order); None when the book has no
        vectors (yet) or they do not cover ``rowids``."""
        stored = self._stored(book_id)
        if stored is None:
            return None
        first = rowids[0] - stored.first_chunk
        last = rowids[1] - stored.first_chunk
        if first < 0 or last >= stored.count or last < first:
            return None
        try:
            wanted = self._embed([query])[0]
        except VectorsUnavailable:
            return None
        return rowids[0], stored.matrix[first : last + 1] @ wanted

    def nearest(
        self, book_id: int, query: str, rowids: tuple[int, int], limit: int
    ) -> list[tuple[int, float]] | None:
        """The ``limit`` chunks of the book within ``rowids`` closest in meaning to ``query``
        as (chunk id, cosine), best first; None when the book has no vectors (yet)."""
        import numpy as np

        found = self.cosines(book_id, query, rowids)
        if found is None:
            return None
        first, scores = found
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(first + int(i), float(scores[i])) for i in top if scores[i] > 0]


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
        self._worker: Any = None  # the worker process while one runs
        self._lock = threading.Lock()
        self.listeners: list[Callable[[int, int], None]] = []

    def request(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._idle.clear()
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="margin-vectors", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Until nothing is left to index (True), or ``timeout`` seconds (False)."""
        return self._idle.wait(timeout)

    def stop(self, *, wait: bool = True) -> None:
        """Stop for good; ``wait=False`` (a process about to end without its interpreter's
        teardown) ends the worker process at once instead of joining the thread."""
        with self._lock:
            self._stopped = True
            self._wake.set()
            worker = self._worker
        if not wait:
            if worker is not None and worker.is_alive():
                worker.terminate()  # never left running after Margin has gone
            return
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _current(self) -> bool:
        """The library is there and at this version's schema (not removed, not being
        migrated or rebuilt by someone else)."""
        from core.store.migrations import SCHEMA_VERSION, current_version

        if not Path(str(self.db.database)).exists():
            return False
        return current_version(self.db) == SCHEMA_VERSION

    def _index(self, vectors: BookVectors) -> None:
        """Every book that lacks vectors, in a spawned worker process when one can be started
        (the model's memory and CPU stay out of this process), else here. The worker is a
        daemon: leaving Margin ends it, never waits for it."""
        import multiprocessing

        from core.search.vector_worker import index_books

        todo = vectors.missing()
        if not todo:
            return
        ctx = multiprocessing.get_context("spawn")
        receive, send = ctx.Pipe(duplex=False)
        worker = ctx.Process(
            target=index_books,
            args=(str(self.db.database), todo, send, vectors.kind),
            name="margin-vectors",
            daemon=True,
        )
        with self._lock:
            if self._stopped:
                return
            self._worker = worker
            try:
                # under the lock: ``stop`` never sees a worker half started (a process that
                # ends meanwhile left it reading its start-up data from a closed pipe, and
                # it printed an EOFError traceback)
                worker.start()
                started = True
            except (OSError, RuntimeError):  # no worker process here: compute in this one
                log.info("vectors computed in this process", exc_info=True)
                self._worker = None
                started = False
        if not started:
            receive.close()
            send.close()
            self._index_here(vectors, todo)
            return
        send.close()
        done = 0
        interrupted = False
        looked = 0.0
        try:
            while done < len(todo) and not self._stopped:
                if not receive.poll(0.5):
                    if not worker.is_alive():
                        break
                    if (
                        self._wake.is_set()
                        and vectors.kind == "sentence"
                        and time.monotonic() - looked > RELOOK_S
                    ):
                        # another book asked for meanwhile: start again with it, its reader's
                        # pages first (what the worker stored so far stays)
                        looked = time.monotonic()
                        interrupted = bool(set(vectors.missing()) - set(todo))
                        if interrupted:
                            break
                    continue
                try:
                    book_id, outcome = receive.recv()
                except EOFError:  # the worker ended
                    break
                done += 1
                if outcome != "ok":
                    log.warning("vectors of book %s: %s", book_id, outcome)
                self._report(done, len(todo))
                if outcome == "unavailable":
                    break
        finally:
            receive.close()
            self._worker = None
            if interrupted:
                worker.terminate()
            worker.join(timeout=1 if self._stopped or interrupted else 5)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=1)

    def _index_here(self, vectors: BookVectors, todo: list[int]) -> None:
        for n, book_id in enumerate(todo, 1):
            if self._stopped:
                return
            try:
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
        from core.search.sentence_vectors import SentenceVectors

        # the static vectors of every book first (seconds), then the sentence encoder's
        # (about 0.1 s a chunk: minutes for a long book)
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
                for vectors in kinds:
                    if self._current() and not self._stopped:
                        self._index(vectors)
            except Exception:  # a closed or damaged library: search stays BM25 alone
                log.warning("background vectors stopped", exc_info=True)
            finally:
                if not self.db.is_closed():
                    self.db.close()  # this thread's own connection
            if not self._wake.is_set():
                # no worker left: multiprocessing's resource tracker ends too (unless a
                # PDF's workers still need it); the next worker starts it again
                from core.processes import stop_resource_tracker

                stop_resource_tracker()
                self._idle.set()
        if self._stopped:
            self._idle.set()


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
