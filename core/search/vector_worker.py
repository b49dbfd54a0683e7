"""The background vectors' worker process (``core.search.vector_indexer.VectorIndexer`` starts it):
each book's vectors computed and stored, at a low priority, the library opened as it is.

It is a plain Python process (``core.processes.PythonWorker``: ``python -m
core.search.vector_worker``, ``Margin --vectors-child`` in the bundle), not a
``multiprocessing`` one: it needs a pipe only, and a spawned ``multiprocessing`` process
brought the resource tracker along, a second child process (issue 41). Its job (JSON on
stdin): the library, its parent's pid, and the books of each kind of vectors; its messages
(JSON lines on stdout): ``["done", kind, book_id, outcome]`` after each book and ``["log",
level, text]`` for the parent's log. The encoder's vectors (the reader's part first) and
the static ones are computed side by side, on two threads: the encoder's products release
the interpreter's lock, the static vectors' tokenizer holds it, so on two cores they overlap.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import peewee as pw

from core.search.embedding import VectorsUnavailable

log = logging.getLogger("margin.search.vectors")

FLAG = "--vectors-child"  # the bundle's launcher runs ``main`` for this argument
# batches encoded side by side (after an import the window rests)
ENCODER_THREADS = min(2, os.cpu_count() or 1)
Send = Callable[[Any], None]


def index_books(
    path: str,
    book_ids: list[int],
    send: Send,
    kind: str = "static",
    reader_only: tuple[int, ...] = (),
) -> None:
    """Each book's vectors of ``kind``, and after each ``send((book_id, outcome))`` ("ok",
    "skipped", "unavailable" or why it failed); only the reader's part of the books in
    ``reader_only`` (encoder vectors). Ends quietly when no one listens any more."""
    try:
        if kind == "sentence" and len(book_ids) > 1:
            # each reader's pages first (the encoder's vectors of a long book take long)
            for book_id in book_ids:
                try:
                    index_in_worker(path, book_id, kind, reader_first=True)
                except VectorsUnavailable as exc:
                    send((book_id, "unavailable"))
                    log.warning("no vectors: %s", exc)
                    return
                except Exception:  # tried again below
                    log.warning("vectors of book %s", book_id, exc_info=True)
        for book_id in book_ids:
            try:
                only = book_id in reader_only
                done = index_in_worker(path, book_id, kind, reader_first=only)
                outcome = "ok" if done else "skipped"
            except VectorsUnavailable as exc:
                send((book_id, "unavailable"))
                log.warning("no vectors: %s", exc)
                return
            except Exception as exc:  # this book only; tried again later
                log.debug("vectors of book %s", book_id, exc_info=True)
                outcome = f"not stored (tried again later): {exc}"
            send((book_id, outcome))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the window or command that started it has gone: what is stored stays


def index_in_worker(
    path: str, book_id: int, kind: str = "static", *, reader_first: bool = False
) -> bool:
    """In the worker process: compute and store one book's vectors. The library is opened
    as it is, never created or migrated (only the window or a command does that): when its
    schema is not this version's, nothing is done."""
    from core.store.db import PRAGMAS
    from core.store.migrations import SCHEMA_VERSION, current_version
    from core.store.models import page_text, unpack_chunk
    from core.store.page_blocks import margin_page

    if not Path(path).exists():
        return False  # the library was removed meanwhile
    db = pw.SqliteDatabase(path, pragmas=PRAGMAS, check_same_thread=False)
    db.register_function(page_text, "margin_text", 1, deterministic=True)
    db.register_function(unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    try:
        db.connect()
        if current_version(db) != SCHEMA_VERSION:
            return False
        if kind == "sentence":
            from core.search.sentence_vectors import SentenceVectors

            return SentenceVectors(db).index_book(book_id, reader_first=reader_first)
        from core.search.vectors import BookVectors

        return BookVectors(db).index_book(book_id)
    finally:
        db.close()


def run_jobs(path: str, jobs: Iterator[Any], send: Send) -> bool:
    """Every job as it comes (a dict: ``{"warm": texts}``, the chunk texts of a book being
    imported, encoded ahead; or ``{"jobs": [{"kind", "books", "reader_only"}, ...]}``) on
    the library at ``path``: the encoder's in order on this thread, the static vectors'
    beside it on another; ``send`` hears ``["done", kind, book_id, outcome]`` after each
    book. Ends once ``jobs`` ends and all is done; False when a job could not be done."""
    deep: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
    static: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()

    failed: list[bool] = []
    stored = threading.Event()  # the book imported is stored (``{"go": true}``, or jobs came)
    over = threading.Event()  # ... or its window stopped sending: nothing more will come

    def read() -> None:
        try:
            for job in jobs:
                if job.get("warm"):
                    deep.put({"warm": [str(t) for t in job["warm"]]})
                for one in job.get("jobs") or ():
                    (deep if one["kind"] == "sentence" else static).put(dict(one))
                if job.get("go") or "jobs" in job:
                    stored.set()
                    over.set()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the window has gone
        except Exception:  # a job it cannot read: those before it are done
            log.warning("the vectors worker failed", exc_info=True)
            failed.append(True)
        finally:
            over.set()
            deep.put(None)
            static.put(None)

    def run(job: dict[str, Any]) -> None:
        kind = str(job["kind"])
        _widen(kind)
        index_books(
            path,
            [int(b) for b in job["books"]],
            lambda done: send(["done", kind, *done]),
            kind,
            tuple(int(b) for b in job.get("reader_only", ())),
        )

    def drain(jobs: queue.SimpleQueue[dict[str, Any] | None]) -> None:
        while (job := jobs.get()) is not None:
            try:
                if "warm" in job:
                    _warm(job["warm"], over, stored)
                else:
                    run(job)
            except (BrokenPipeError, ConnectionResetError):
                return  # the window has gone
            except Exception:
                log.warning("the vectors worker failed", exc_info=True)
                failed.append(True)

    reader = threading.Thread(target=read, name="margin-vector-jobs", daemon=True)
    reader.start()
    beside = threading.Thread(target=drain, args=(static,), name="margin-static-vectors")
    beside.start()
    drain(deep)
    beside.join()
    return not failed


def _warm(texts: list[str], over: threading.Event, stored: threading.Event) -> None:
    """The windows of the first chunks (``texts``) of a book being imported: the models are
    loaded and the windows cut while it is stored, then encoded as soon as it is (``over``
    and ``stored``; not while it is stored: the import would share the cores with them),
    before the window opens the book and asks for them (``SentenceEncoder.memo``)."""
    from core.search.frontmatter import is_front_matter
    from core.search.sentence_vectors import _encoder, cut_windows

    try:
        _widen("static")
        _widen("sentence")
        encoder = _encoder()
        texts = [t for t in texts if not is_front_matter(t)]  # (never encoded)
        windows = [w for cut in cut_windows(encoder, texts) for w in cut]
        over.wait()
        if stored.is_set():  # (not when the import failed: the window ends this worker)
            encoder.remember(windows)
    except VectorsUnavailable:
        pass  # the book's jobs say so


def _widen(kind: str) -> None:
    """This process embeds whole books: its model keeps its numbers as float32 (more memory
    here, less work a batch; the window never does this)."""
    try:
        if kind == "sentence":
            from core.search.sentence_vectors import _encoder

            _encoder().widen(ENCODER_THREADS)
        else:
            from core.search import embedding

            embedding.widen()
    except VectorsUnavailable:
        pass  # each book says so (``index_books``)


class _ToParent(logging.Handler):
    """The worker's log records, sent to the parent's log (warnings and above)."""

    def emit(self, record: logging.LogRecord) -> None:
        from core.processes import worker_send

        try:
            worker_send(["log", record.levelno, self.format(record)])
        except Exception:  # the parent has gone: nothing to tell
            pass


def main() -> int:
    """The worker process: its jobs from stdin, one a line (the first also names the library
    and its window's pid), its messages on stdout (``PythonWorker``)."""
    from core.processes import worker_job, worker_send
    from core.store.owner import first_job

    started = time.monotonic()
    handler = _ToParent(logging.WARNING)
    handler.setFormatter(logging.Formatter("vectors worker: %(message)s"))
    logging.getLogger().addHandler(handler)
    try:
        first = first_job()
        if first is None:
            return 0

        def jobs() -> Iterator[Any]:
            job: Any = first
            while isinstance(job, dict):
                yield job
                job = worker_job()

        done = run_jobs(str(first["path"]), jobs(), worker_send)
        log.debug("vectors worker done in %.1f s", time.monotonic() - started)
        if not done:
            return 1
    except (BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
        pass  # the window or command that started it has gone (or stopped it)
    except Exception:
        log.warning("the vectors worker failed", exc_info=True)
        return 1
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
