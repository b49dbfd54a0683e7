"""Passages mode reads a book's sentences ahead of the first question (issue 41).

A reply's time is almost all the sentence encoder reading the candidate sentences of the
passages found (``answer_sentence.pick``: about 24 of them, 270 ms of CPU here). Those are
sentences of pages up to ``read_to``, so once the book is open a thread of its own reads
them into ``answer_sentence``'s cache, the pages nearest ``read_to`` first, at most the
cache's room (float16 vectors: about 10 MB at most), in small batches at a lower priority,
and again for the new pages once reading on pauses (sentences read before are skipped); a
reply then encodes only its question and the few sentences not read yet. Nothing is stored: the
vectors of every sentence would take more of the library file than the book's text
(tests/bench/bench_passages_speed.py measures both sides).

The encoding runs in a worker process (``sentence_worker``: a plain Python process, no
``multiprocessing`` resource tracker beside it), which ends when it is done or stopped: the
encoder and numpy (40–60 MB) stay out of the window's memory while the reader reads
(tests/bench/bench_memory.py). Where no process can be started, it runs on the thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.agent.providers import answer_sentence
from core.search.sentences import is_heading, paragraphs, sentences

if TYPE_CHECKING:
    from core.store.library import Library

log = logging.getLogger("margin.agent.warmup")

PAGES = 400  # pages before read_to read ahead at most (about the cache's room of sentences)
BATCH = 32  # sentences encoded at a time (a stop is seen between two)
READ_AHEAD_ENV = "MARGIN_READ_AHEAD"
POLL_S = 0.2  # how often the thread waiting for the worker looks for a stop


def book_sentences(pages: Sequence[tuple[int, str]]) -> list[str]:
    """The sentences a reply may weigh, of ``pages`` ((number, text), the nearest to the
    reader first), as ``passages_reply.whole_sentences`` cuts a passage: headings left out."""
    out: list[str] = []
    for _, text in pages:
        for paragraph in paragraphs(text):
            if not is_heading(paragraph):
                out.extend(sentences(paragraph))
    return out


def _lower_priority() -> None:
    """This thread yields to the window (Linux nice values are per thread)."""
    with contextlib.suppress(Exception):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class SentenceWarmup:
    """Reads one book's sentences ahead in a daemon thread (which leaves the encoding to a
    worker process unless ``in_process``); a new book stops the last."""

    def __init__(self, *, in_process: bool | None = None) -> None:
        # unless told: MARGIN_READ_AHEAD "thread" reads on the thread, "off" not at all (the
        # test suite: each window would spawn a worker), anything else in a worker process
        mode = os.environ.get(READ_AHEAD_ENV, "").strip().lower()
        self.off = in_process is None and mode == "off"
        self.in_process = mode == "thread" if in_process is None else in_process
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, pages: Sequence[tuple[int, str]]) -> None:
        """Read the sentences of ``pages`` (nearest to the reader first) ahead."""
        self.stop()
        if self.off:
            return
        stop = self._stop = threading.Event()

        def run() -> None:
            _lower_priority()
            try:
                todo = answer_sentence.missing(book_sentences(pages))
                if not todo:  # all read before (the encoder is not even loaded)
                    return
                done = None if self.in_process else read_in_worker(todo, stop)
                if done is None:  # no worker process here: on this thread
                    done = answer_sentence.read_ahead(todo, stop, batch=BATCH)
                log.info("read %d sentences ahead for passages mode", done)
            except Exception:  # only a head start: a reply encodes what it needs itself
                log.exception("reading sentences ahead failed")

        self._thread = threading.Thread(target=run, name="margin-read-ahead", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def read_in_worker(todo: list[str], stop: threading.Event, batch: int = BATCH) -> int | None:
    """Encode ``todo`` in a worker process, caching each batch as it comes, until done or
    ``stop`` is set (the worker is then ended); how many were cached, or None when no
    process could be started. Nothing is started when the encoder's weights are missing."""
    import base64

    from core.agent.providers.sentence_worker import FLAG
    from core.processes import PythonWorker
    from core.search.encoder_files import weights_present

    if not weights_present():
        return 0
    if stop.is_set():
        return 0
    try:
        worker = PythonWorker(
            "core.agent.providers.sentence_worker",
            FLAG,
            {"texts": todo, "batch": batch, "parent": os.getpid()},
        )
    except OSError:
        log.info("sentences read ahead on this thread", exc_info=True)
        return None
    done = 0
    try:
        while done < len(todo) and not stop.is_set():
            try:
                message = worker.receive(POLL_S)
            except EOFError:
                break  # it ended (no encoder, or it failed: the reply encodes itself)
            if not isinstance(message, list) or len(message) != 2:
                continue
            first, raw = int(message[0]), base64.b64decode(message[1])
            part = todo[first : first + batch]
            answer_sentence.keep_raw(part, raw)
            done += len(part)
    finally:
        worker.terminate()
        worker.join(timeout=2)
    return done


def pages_ahead(library: Library, book_id: int) -> list[tuple[int, str]]:
    """The texts of the book's last ``PAGES`` pages up to ``read_to``, the nearest first
    (on a database thread)."""
    book = library.find_book(book_id)
    if book.page_count < 1:
        return []
    bound = book.spoiler_bound  # None: finished, every page may be asked about
    end = max(1, book.page_count if bound is None else min(book.page_count, bound))
    pages = library.pages(book_id, max(1, end - PAGES + 1), end)
    return [(p.number, p.text) for p in reversed(pages)]
