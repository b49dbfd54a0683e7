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
    """Reads one book's sentences ahead in a daemon thread; a new book stops the last."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, pages: Sequence[tuple[int, str]]) -> None:
        """Read the sentences of ``pages`` (nearest to the reader first) ahead."""
        self.stop()
        stop = self._stop = threading.Event()

        def run() -> None:
            _lower_priority()
            try:
                done = answer_sentence.read_ahead(book_sentences(pages), stop)
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
