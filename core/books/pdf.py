"""PDF books with pypdfium2: real pages, page labels, the outline as table of contents.

Text extraction costs 4–6 ms a page and runs in worker processes (spawned, never forked: the
window process has Qt threads) whose memory is capped, so a hostile page cannot exhaust the
computer's memory. Long PDFs are shared by two workers when a second core is free.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.model import BookFormat, PageContent, ParsedBook
from core.books.pdf_doc import clean_page_text, labels, meta, open_pdf, page_text, toc
from core.errors import BookCode, BookError
from core.processes import register as register_workers
from core.processes import starting, stop_resource_tracker
from core.progress import CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)
PARALLEL_FROM_PAGES = 60
"""From this many pages a second worker may share the reading."""
FIRST_PIECE = 16
PIECE = 32
__all__ = ["clean_page_text", "parse_pdf", "pdf_worker", "shutdown_workers", "warm_workers"]


_worker_doc: tuple[tuple[str, int, int, str | None], object] | None = None


def _worker_extract(path_str: str, start: int, stop: int, password: str | None = None) -> list[str]:
    """Worker-process side: the document stays open across the pieces of one book (opening
    a long PDF costs more than a few pages of text) until ``_worker_close`` or another
    file."""
    global _worker_doc
    try:
        stat = os.stat(path_str)
        key = (path_str, stat.st_mtime_ns, stat.st_size, password)
    except OSError:
        key = (path_str, 0, 0, password)
    if _worker_doc is not None and _worker_doc[0] != key:
        _worker_close()
    if _worker_doc is None:
        _worker_doc = (key, open_pdf(Path(path_str), password))
    doc = _worker_doc[1]
    try:
        return [page_text(doc, index) for index in range(start, stop)]
    except BaseException:
        _worker_close()
        raise


def _worker_close() -> None:
    global _worker_doc
    if _worker_doc is not None:
        _worker_doc[1].close()  # type: ignore[attr-defined]
        _worker_doc = None


def parse_pdf(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
    password: str | None = None,
) -> ParsedBook:
    """The PDF's real pages with their text. Pages without text (scanned pages, drawings)
    are kept with none: the window draws them, and only search and the assistant have
    nothing to read there. ``password`` opens a protected PDF; it stays in memory."""
    doc = open_pdf(path, password)
    try:
        count = len(doc)
        if count == 0:
            raise BookError(BookCode.EMPTY, f"{path.name} has no pages.")
        if count > limits.max_pages:
            raise too_large(path, f"it has {count:,} pages, more than {limits.max_pages:,}")
        page_labels = labels(doc, count)
        contents = toc(doc, count)
        info = meta(doc)
    finally:
        doc.close()
    texts = _extract_all(path, count, progress, cancel, limits, password=password)
    texts = [_within(text, limits.max_paragraph_chars) for text in texts]
    without = sum(1 for t in texts if not t.strip())
    if without:
        log.info("%d of %d pages have no text", without, count)
    pages = tuple(
        PageContent(number=i + 1, label=page_labels[i], text=texts[i], chapter=0)
        for i in range(count)
    )
    title = info.get("Title", "")
    if not title or title.lower() in ("untitled", "microsoft word", "title"):
        title = path.stem.replace("_", " ")
    return ParsedBook(
        format=BookFormat.PDF,
        title=title,
        author=info.get("Author", ""),
        language="",
        pages=pages,
        toc=tuple(contents),
        extra={"pages_without_text": str(without)},
    )


def _within(text: str, limit: int) -> str:
    """A page whose paragraph is longer than ``limit`` characters (a page of garbage, or a
    file built to be too long) keeps the first ``limit`` of them: the page still opens."""
    paragraphs = text.split("\n\n")
    if max((len(p) for p in paragraphs), default=0) <= limit:
        return text
    log.info("a paragraph longer than %d characters was cut", limit)
    return "\n\n".join(p[:limit] for p in paragraphs)


_pools: dict[int, tuple[int, ProcessPoolExecutor]] = {}  # slot -> (memory cap, pool)
register_workers(lambda: bool(_pools))  # the resource tracker stays while a pool does


def _limit_memory(max_bytes: int, parent: int | None = None) -> None:
    """Worker initializer: end with the process that started it (``parent``: a killed import
    leaves no worker behind), and cap the worker's address space, so a page whose content
    stream unpacks to gigabytes (a deflate bomb) fails in the worker, not the whole
    computer."""
    from core.store.owner import exit_with_parent

    exit_with_parent(parent)
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass  # not on this system: the worker still keeps the window process safe


def _worker_pool(slot: int, max_bytes: int) -> ProcessPoolExecutor:
    """Long-lived spawned single-process pools (starting one costs ~0.1 s, so they are
    reused). Slot 0 reads every PDF; slot 1 joins for long ones when a core is free."""
    current = _pools.get(slot)
    if current is not None and current[0] == max_bytes:
        return current[1]
    if current is not None:
        _started.discard(id(current[1]))
        current[1].shutdown(wait=False, cancel_futures=True)
    ctx = multiprocessing.get_context("spawn")
    with starting():  # the pool's semaphores outlive a tracker stop on another thread
        pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=ctx,
            initializer=_limit_memory,
            initargs=(max_bytes, os.getpid()),
        )
        _pools[slot] = (max_bytes, pool)
    return pool


def _ready() -> bool:
    return True


_started: set[int] = set()  # ids of pools whose worker process has answered once
WORKER_START_S = 60.0


def _worker_failed(detail: object) -> BookError:
    return BookError(
        "worker_failed",
        f"Margin could not start the helper process that reads PDF text ({detail}).",
        hint="Close some programs and try again; if it keeps happening, reinstall Margin.",
    )


def _started_pool(slot: int, max_bytes: int) -> ProcessPoolExecutor:
    """The pool of ``slot`` with its worker known to run: a worker that cannot start (no
    processes left, a broken installation) is reported as that, not as a memory problem
    or a damaged book."""
    try:
        pool = _worker_pool(slot, max_bytes)
    except OSError as exc:  # the resource tracker (started with the same executable) died
        raise _worker_failed(exc.strerror) from exc
    if id(pool) in _started:
        return pool
    try:
        pool.submit(_ready).result(timeout=WORKER_START_S)
    except (OSError, BrokenProcessPool, RuntimeError, TimeoutError) as exc:
        if _pools.get(slot, (0, None))[1] is pool:
            del _pools[slot]
        pool.shutdown(wait=False, cancel_futures=True)
        raise _worker_failed(exc.strerror if isinstance(exc, OSError) else exc) from exc
    _started.add(id(pool))
    return pool


def warm_workers(limits: Limits = DEFAULT_LIMITS) -> None:
    """Start the PDF workers ahead of time (a cold start costs a few hundred ms), e.g. when
    the window has shown. Does not wait for them."""
    slots = 2 if _usable_cores() >= 2 else 1
    for slot in range(slots):
        _worker_pool(slot, limits.max_pdf_worker_bytes).submit(_ready)


def shutdown_workers(*, wait: bool = False) -> None:
    for slot in list(_pools):
        pool = _pools.pop(slot)[1]
        _started.discard(id(pool))
        pool.shutdown(wait=wait, cancel_futures=True)


# Idle workers (each ~40 MB) and multiprocessing's resource tracker end a few seconds after
# the last PDF was read; the next PDF starts them again (~0.1-0.3 s).
IDLE_S = 5.0
_idle_lock = threading.Lock()
_idle_timer: threading.Timer | None = None
_reading = 0  # PDFs being read now


def _busy() -> None:
    global _reading, _idle_timer
    with _idle_lock:
        _reading += 1
        if _idle_timer is not None:
            _idle_timer.cancel()
            _idle_timer = None


def _idle() -> None:
    global _reading, _idle_timer
    with _idle_lock:
        _reading -= 1
        if _reading == 0 and _pools:
            _idle_timer = threading.Timer(IDLE_S, _stop_idle_workers)
            _idle_timer.daemon = True
            _idle_timer.name = "margin-pdf-idle"
            _idle_timer.start()


def _stop_idle_workers() -> None:
    global _idle_timer
    with _idle_lock:
        if _reading or _idle_timer is None:
            return  # a PDF started meanwhile
        _idle_timer = None
        shutdown_workers(wait=True)
        stop_resource_tracker()
    from core.books.memory import give_back_memory

    give_back_memory()
    log.info("PDF workers stopped after %.0f s idle", IDLE_S)


@contextmanager
def pdf_worker(limits: Limits = DEFAULT_LIMITS) -> Iterator[ProcessPoolExecutor]:
    """The first PDF worker (started, memory capped), kept from its idle stop while held:
    other page work (drawing pages for text recognition) runs there, warm when a PDF was
    just read. A ``BrokenProcessPool`` from it means its worker died: ``shutdown_workers``."""
    _busy()
    try:
        yield _started_pool(0, limits.max_pdf_worker_bytes)
    finally:
        _idle()


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _ranges(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(stop, s + size)) for s in range(start, stop, size)]


def _extract_all(
    path: Path,
    count: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    *,
    use_worker: bool | None = None,
    password: str | None = None,
) -> list[str]:
    """Text of every page, in order, read in worker processes with a memory cap.

    One worker reads a short book, or any book on a machine with one usable core. A long
    book (``PARALLEL_FROM_PAGES``) gets a second worker. The workers take the next piece as
    they finish one, so a worker slowed by another program never holds the book up (a fixed
    half each made the split slower than one process when the other core was busy; measured
    in tests/bench/bench_import.py --compare). ``use_worker`` forces the second worker on
    (True) or off (False).
    """
    _busy()
    try:
        return _read_pages(path, count, progress, cancel, limits, use_worker, password)
    finally:
        _idle()


def _read_pages(
    path: Path,
    count: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    use_worker: bool | None,
    password: str | None = None,
) -> list[str]:
    name = str(path)
    workers = [_started_pool(0, limits.max_pdf_worker_bytes)]
    pieces = [(0, min(count, FIRST_PIECE)), *_ranges(min(count, FIRST_PIECE), count, PIECE)]
    queue = deque(enumerate(pieces))
    waiting: list[deque[tuple[int, Future[list[str]]]]] = [deque()]
    results: dict[int, list[str]] = {}

    def feed(w: int) -> None:
        while len(waiting[w]) < 2 and queue:
            index, (start, stop) = queue.popleft()
            waiting[w].append(
                (index, workers[w].submit(_worker_extract, name, start, stop, password))
            )

    try:
        feed(0)
        if use_worker is None:
            use_worker = count >= PARALLEL_FROM_PAGES and _usable_cores() >= 2
        if use_worker and len(pieces) > 2:
            try:
                workers.append(_started_pool(1, limits.max_pdf_worker_bytes))
            except BookError:
                use_worker = False  # the first worker reads it alone
        if use_worker and len(workers) == 2:
            waiting.append(deque())
            feed(1)
        done = 0
        while done < len(pieces):
            if cancel is not None:
                cancel.check()
            futures_wait(
                [f for line in waiting for _, f in line], timeout=0.1, return_when=FIRST_COMPLETED
            )
            for w, line in enumerate(waiting):
                while line and line[0][1].done():
                    index, future = line.popleft()
                    results[index] = future.result()
                feed(w)
            before_done = done
            while done in results:
                done += 1
            if done != before_done:
                read = sum(len(results[i]) for i in range(done))
                progress(read / count, f"Reading page {read} of {count}")
        return [text for i in range(len(pieces)) for text in results[i]]
    except BaseException as exc:
        for line in waiting:
            for _, future in line:
                future.cancel()
        if isinstance(exc, (MemoryError, BrokenProcessPool)):
            shutdown_workers()  # a worker that ran out of memory may be dead or unusable
            raise too_large(
                path,
                f"reading its text needs more than {human_size(limits.max_pdf_worker_bytes)} "
                "of memory (the file may be damaged, or built to exhaust memory)",
                hint="Open it in another PDF viewer and save a new copy, then open that.",
            ) from None
        if isinstance(exc, Exception) and not isinstance(exc, BookError):
            raise BookError(
                BookCode.CORRUPT,
                f"{path.name} is damaged: some of its pages cannot be read ({exc}).",
                hint="Open it in another PDF viewer and save a new copy, then open that.",
            ) from None
        raise
    finally:
        for worker in workers:
            try:
                worker.submit(_worker_close)  # runs after this worker's pieces
            except RuntimeError:
                pass  # the pool was shut down
