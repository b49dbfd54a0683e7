"""A second process that parses a big EPUB's last documents while the parse reads the first.

Walking a document's HTML in Python holds the global lock, so a second thread cannot share
it (issue 41); a second process can. The parse (core.books.epub) takes the documents from
the front, the worker from the back, until they meet: each claims a document in a shared
counter before reading it, so neither waits for the other and a worker slowed by another
program (or still starting) simply takes fewer. The worker (core.books.epubjob) sends each
document's chapters back cut into pages (core.books.pages.cut_chapter), as few objects as it
can (core.books.epubwire); the parse unpacks them between its own documents. Every
``CHECK_AFTER`` documents the parse looks whether it kept its core: when another program
shares the machine's two cores, the worker only takes the parse's time, and is stopped.

The output stays exactly what the parse alone makes. A document's blocks depend on what
the documents before it left: note references naming its notes, links into it, embedded
fonts. The worker reads each document as if none of that existed beyond what the parse
knew when it started (the page-list's targets), and says what the document itself added;
the parse uses a result only if, when its turn comes, the book's state for that document
is still that (no note reference into it, no new link target in it, no embedded font),
and reads the document itself otherwise. Errors are the parse's: a document the worker
could not read is read again, in its turn, by the parse.

The worker is spawned (never forked: the window has Qt threads), runs at a lower priority
(its start would otherwise take a core from a first book it comes too late for), is kept
for ``IDLE_S`` after a book so the next one does not pay its start, and used only for books of at least
``FROM_BYTES`` of XHTML in ``FROM_DOCUMENTS`` documents on a machine with a second core. A
first big book is read alone (``wanted``: the worker would come too late for it); the next
one, soon after, starts it for those that follow.
``MARGIN_EPUB_WORKER=1`` uses it for every EPUB, ``=all`` also has the parse wait for it
for every document it can read (the tests and bench_parse_same compare that output with
the parse's own), ``=0`` never.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from core.books.epubjob import BACK, FRONT, HEAD, RAW, RESULT, SKIP, Job, serve
from core.books.epubwire import decode
from core.processes import register, starting, stop_resource_tracker, worker_nice

log = logging.getLogger(__name__)

FROM_BYTES = 2 * 1024 * 1024
"""From this much XHTML (unpacked) a book is shared with the worker."""
FROM_DOCUMENTS = 8
"""And in at least this many documents."""
IDLE_S = 5.0
"""The worker ends this long after its last book."""
ENV = "MARGIN_EPUB_WORKER"
CHECK_AFTER = 10
"""Every this many documents it reads itself, the parse looks whether the worker does share
the machine's cores with it (``SIDE_BY_SIDE``) since it last looked."""
SIDE_BY_SIDE = 0.85
"""The parse's thread CPU time ÷ the time passed below which the worker is stopped: with a
free second core the parse keeps its own (≈1.0); when another program keeps one busy, three
share two cores (≈0.67) and the worker takes from the parse about what it gives."""
PIPE_BYTES = 1024 * 1024  # the results pipe's buffer (Linux): a document's pages in one go
COLD_FROM_BYTES = 48 * 1024 * 1024
"""When no worker runs, a book of this much XHTML starts one for itself; a smaller one does
only when another big book came just before it (``AGAIN_S``: a batch of imports). The
worker takes 0.2-0.5 s to start, and a 16 MiB EPUB (close to the most pages a book may
have, ``Limits.max_pages``) is read in about 0.3 s: a worker started for it read none of
its 140 documents, and starting it cost that parse 80-100 ms (the start's own wait, and no
reading ahead: issue 41, a reader's first book)."""
AGAIN_S = 30.0
"""A big book that follows another within this long starts the worker, for the books after."""
_last_big: float | None = None  # (time.monotonic() when the last big book began)


def mode() -> bool | None:
    """``MARGIN_EPUB_WORKER``: True (always), False (never) or None (when it pays)."""
    value = os.environ.get(ENV, "").strip()
    return {"1": True, "all": True, "0": False}.get(value)


def _all() -> bool:
    """``MARGIN_EPUB_WORKER=all``: the worker reads every document it can, the parse waits
    for it (to compare its output with the parse's in tests and bench_parse_same)."""
    return os.environ.get(ENV, "").strip() == "all"


def worth_it(total_bytes: int, documents: int) -> bool:
    """Whether sharing a book of ``documents`` XHTML documents holding ``total_bytes`` pays:
    enough text in enough documents (of a few, the two sides would wait for each other's
    last), and a second core."""
    forced = mode()
    if forced is not None:
        return forced
    if total_bytes < FROM_BYTES or documents < FROM_DOCUMENTS:
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


def wanted(total_bytes: int) -> bool:
    """Whether a big book (``worth_it``) is shared with the worker now: always when it runs
    (kept from a book before: ``IDLE_S``) or is forced; else only when the book is huge
    (``COLD_FROM_BYTES``) or follows another big book (``AGAIN_S``): a first book is read
    alone, with its documents read ahead, and the next one starts the worker."""
    global _last_big
    now = time.monotonic()
    before, _last_big = _last_big, now
    if mode() is not None or total_bytes >= COLD_FROM_BYTES:
        return True
    with _lock:
        running = _worker is not None and _worker.proc.is_alive()
    return running or (before is not None and now - before < AGAIN_S)


# --- the parse's side -------------------------------------------------------------------------


def _message(results: Connection) -> tuple[int, int, int, int, bytes | bytearray] | None:
    """The next message from the worker: (kind, job, document, size of its meta part, its
    body); None when the worker is gone."""
    if not RAW:
        try:
            message = results.recv_bytes()
        except (EOFError, OSError):
            return None
        kind, number, index, meta_size, _ = HEAD.unpack_from(message)
        return kind, number, index, meta_size, message[HEAD.size :]
    fd = results.fileno()
    head = _read_exactly(fd, HEAD.size)
    if head is None:
        return None
    kind, number, index, meta_size, wide_size = HEAD.unpack(head)
    body = _read_exactly(fd, meta_size + wide_size)
    return None if body is None else (kind, number, index, meta_size, body)


def _read_exactly(fd: int, size: int) -> bytearray | None:
    """``size`` bytes from ``fd`` (None: it closed first, the worker is gone)."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        try:
            count = os.readv(fd, [view[got:]])
        except InterruptedError:
            continue
        except OSError:
            return None
        if count == 0:
            return None
        got += count
    return buffer


def _behind(pid: int | None) -> None:
    """Process ``pid`` (the worker, the resource tracker its start started) runs only on
    time no one else wants (``core.processes.worker_nice``): starting it (a Python and its
    imports, 0.1-0.25 s of CPU) must not take the core the parse's own threads use, nor
    another program's, when the book is over before it is ready (a reader's first book);
    on an idle second core it runs as fast as at any priority. (Not with ``=all``: there
    the parse waits for it.)"""
    step = worker_nice()
    if pid is None or step <= 0 or _all():
        return
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)  # (``step`` below this process, as os.nice)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, own + step))
    except (AttributeError, OSError):  # not POSIX, or not allowed
        log.debug("the EPUB worker's priority could not be lowered", exc_info=True)


def _tracker_pid() -> int | None:
    """multiprocessing's resource tracker, which the worker's start started (if it did)."""
    from multiprocessing import resource_tracker

    pid = getattr(resource_tracker._resource_tracker, "_pid", None)
    return pid if isinstance(pid, int) else None


class _Worker:
    """The worker process, its pipe and the two shared counters."""

    def __init__(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.results, to_parent = ctx.Pipe(duplex=False)
        self.shared = ctx.RawArray("q", 2)
        with starting():  # (the resource tracker is kept while the process lives)
            self.proc = ctx.Process(
                target=serve, args=(child, to_parent, self.shared), name="margin-epub", daemon=True
            )
            self.proc.start()
        _behind(self.proc.pid)
        _behind(_tracker_pid())
        child.close()
        to_parent.close()
        try:
            import fcntl

            fcntl.fcntl(self.results.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass  # (not Linux, or not allowed: the default buffer, more switches)
        self.busy = threading.Lock()  # a book is being shared with it
        self.jobs = 0

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)
        self.conn.close()
        self.results.close()


_lock = threading.Lock()
_worker: _Worker | None = None
_idle: threading.Timer | None = None
register(lambda: _worker is not None)


def _stop_idle(worker: _Worker) -> None:
    global _worker, _idle
    with _lock:
        if _worker is not worker or not worker.busy.acquire(blocking=False):
            return  # a book started meanwhile
        _worker, _idle = None, None
    worker.stop()
    stop_resource_tracker()
    log.info("the EPUB worker stopped after %.0f s idle", IDLE_S)


def shutdown() -> None:
    """End the worker now (tests; the process's exit ends it anyway)."""
    global _worker, _idle
    with _lock:
        worker, _worker = _worker, None
        if _idle is not None:
            _idle.cancel()
            _idle = None
    if worker is not None:
        worker.stop()


def _free_worker() -> _Worker | None:
    """The worker, started if need be, and reserved for one book (None: busy)."""
    global _worker, _idle
    with _lock:
        if _idle is not None:
            _idle.cancel()
            _idle = None
        worker = _worker
        if worker is not None and not worker.proc.is_alive():
            worker.conn.close()
            worker.results.close()
            worker = _worker = None
        if worker is None:
            try:
                worker = _worker = _Worker()
            except Exception:  # no process can be started: the parse reads alone
                log.warning("the EPUB worker could not start", exc_info=True)
                return None
        if not worker.busy.acquire(blocking=False):
            return None  # another book is being read: this one is read alone
        return worker


def _release(worker: _Worker) -> None:
    global _idle
    with _lock:
        worker.busy.release()
        if _worker is worker:
            _idle = threading.Timer(IDLE_S, _stop_idle, (worker,))
            _idle.daemon = True
            _idle.name = "margin-epub-idle"
            _idle.start()


class Helper:
    """One book shared with the worker: ``take(i)`` is the worker's reading of the ``i``-th
    document of ``job.docs`` (asked in order), or None when the parse reads it itself."""

    def __init__(self, worker: _Worker, job: Job) -> None:
        self._worker = worker
        worker.jobs += 1
        job.number = worker.jobs
        self._number = job.number
        self._count = len(job.docs)
        self._results: dict[int, Any] = {}
        self._skips: set[int] = set()
        self._end: int | None = None  # the worker reads none of the documents up to it
        self._ready = threading.Condition()
        self._all = _all()
        self._stopped = False
        self._own = 0  # documents the parse took itself
        self._started = (time.perf_counter(), time.thread_time())
        self.used = 0  # documents the worker read that the parse took
        worker.shared[FRONT] = 0
        worker.shared[BACK] = self._count
        worker.conn.send(job)
        self._thread = threading.Thread(target=self._receive, name="margin-epub-results")
        self._thread.daemon = True
        self._thread.start()

    def _receive(self) -> None:
        try:
            while True:
                message = _message(self._worker.results)
                if message is None:
                    log.warning("the EPUB worker ended: the parse reads the rest itself")
                    with self._ready:
                        self._end = self._count
                        self._ready.notify_all()
                    return
                kind, number, index, meta_size, body = message
                if number != self._number:
                    continue
                with self._ready:
                    if kind == RESULT:
                        self._results[index] = [meta_size, body]  # (a tuple once unpacked)
                    elif kind == SKIP:
                        self._skips.add(index)
                    else:
                        self._end = index
                        self._ready.notify_all()
                        return
                    self._ready.notify_all()
        finally:
            _release(self._worker)

    def take(self, index: int) -> tuple[Any, ...] | None:
        """(problem, chapters or None, cuts, labels, targets) of document ``index``."""
        if index not in self._results:
            if index in self._skips or (self._end is not None and index <= self._end):
                return None
            if not self._all:
                if not self._stopped:  # taken, unless the worker took it first
                    self._worker.shared[FRONT] = index + 1
                if self._worker.shared[BACK] > index:
                    self._own += 1
                    checked = self._own % CHECK_AFTER == 0 and not self._stopped
                    if checked and not self._side_by_side():
                        self.stop()
                    return None
            with self._ready:
                while not (
                    index in self._results
                    or index in self._skips
                    or (self._end is not None and index <= self._end)
                ):
                    self._ready.wait(0.1)
                    if not self._worker.proc.is_alive() and self._end is None:
                        self._end = self._count
        message = self._results.pop(index, None)
        if message is None:
            return None
        self.used += 1
        if isinstance(message, tuple):
            return message
        meta_size, body = message
        view = memoryview(body)
        return decode(view[:meta_size], view[meta_size:])

    def unpack(self) -> None:
        """Unpack the documents the worker has sent so far (the parse's time, spent while
        the worker still reads rather than after)."""
        for index, message in list(self._results.items()):
            if isinstance(message, list):
                meta_size, body = message
                view = memoryview(body)
                self._results[index] = decode(view[:meta_size], view[meta_size:])

    def _side_by_side(self) -> bool:
        """Whether the parse kept its core since the last look: its thread's CPU time is
        most of the time passed (under ``SIDE_BY_SIDE``: another program shares the cores,
        and the worker only takes the parse's time)."""
        wall, cpu = self._started
        self._started = now = (time.perf_counter(), time.thread_time())  # (the next check's)
        passed = now[0] - wall
        return passed <= 0 or (now[1] - cpu) / passed >= SIDE_BY_SIDE

    def stop(self) -> None:
        """The worker stops after the document it is on; the parse reads the rest."""
        self._stopped = True
        if self._end is None:
            self._worker.shared[FRONT] = self._count + 1

    def close(self) -> None:
        """The parse is done (or failed): the worker stops after the document it is on."""
        if self._end is None:
            self._worker.shared[FRONT] = self._count + 1


def helper(job: Job) -> Helper | None:
    """The worker, given ``job`` (None when it is busy with another book or cannot start)."""
    worker = _free_worker()
    if worker is None:
        return None
    try:
        return Helper(worker, job)
    except Exception:
        log.warning("the EPUB worker could not take the book", exc_info=True)
        _release(worker)
        return None
