"""Reading an EPUB's documents ahead of the parse, on a second thread.

Unpacking a document (zlib, a sixth of a 16 MiB EPUB's parsing) runs without Python's
global lock, so on a second core it overlaps the walk of the documents before it, which
needs the lock (issue 41). What the thread does is a pure function of each document, done in
spine order, so the parse gets exactly what it would have read itself, failures included:
an error met reading a document is raised when the parse asks for that document, never
earlier. At most ``DEPTH`` documents wait, so a book of a few huge documents holds no more
than before plus those. (Parsing the HTML there too gained nothing: walking a tree built on
the other core cost the parse what building it would have.)
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence

DEPTH = 3
"""Documents read ahead and waiting at most."""
CHECK_AFTER = 12
"""Documents taken before looking whether the thread runs beside the parse."""
SIDE_BY_SIDE = 1.1
"""CPU time ÷ time passed above which the two threads ran side by side (each document
takes the parse about three times what it takes the thread, so ~1.3 on two free cores; at
most 1.0 with one)."""
_STOPPED = object()  # what the thread hands over last when it stopped early
SWITCH_S = 0.0005
"""Python's thread switch interval while reading ahead (5 ms otherwise): the thread needs
the lock for a moment between its unlocked steps, and waiting 5 ms for it each time would
leave it behind the parse."""
FROM_BYTES = 2 * 1024 * 1024
"""From this much XHTML (unpacked) a book is read ahead: below it, starting the thread and
handing the documents over cost more than the overlap gives."""


def worth_it(total_bytes: int) -> bool:
    """Whether reading ahead pays: enough text, and a second core to do it on."""
    if total_bytes < FROM_BYTES:
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


class ReadAhead[T]:
    """``work(name)`` for each of ``names`` in order on a thread; ``take(name)`` returns the
    next result (or raises what ``work`` raised for it), and must be asked in the same
    order. ``close()`` stops the thread (the parse failed or was cancelled).

    After ``CHECK_AFTER`` documents it looks whether the two threads did run side by side
    (the process's CPU time against the time passed): when no second core was free (another
    program keeps it busy) the thread only adds switching, so it stops and ``take`` does
    ``work`` itself for the rest."""

    def __init__(self, names: Sequence[str], work: Callable[[str], T]) -> None:
        self._names = list(names)
        self._work = work
        self._ready: queue.Queue[tuple[object, T | None, BaseException | None]] = queue.Queue(DEPTH)
        self._stop = threading.Event()
        self._next = 0
        self._direct = False  # the thread stopped early: take works itself
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, SWITCH_S))
        self._started = (time.perf_counter(), time.process_time())
        self._thread = threading.Thread(target=self._run, name="margin-epub-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for name in self._names:
            if self._stop.is_set():
                self._ready.put((_STOPPED, None, None))  # (take works itself from here)
                return
            try:
                item: tuple[object, T | None, BaseException | None] = (name, self._work(name), None)
            except BaseException as exc:  # handed to the parse, which raises it in its turn
                item = (name, None, exc)
            self._ready.put(item)
            if item[2] is not None:
                return

    def take(self, name: str) -> T:
        """The result for ``name``, the next name in the order given (else a ValueError)."""
        if self._next >= len(self._names) or self._names[self._next] != name:
            raise ValueError(f"{name!r} was not the next document to read ahead")
        self._next += 1
        if self._next == CHECK_AFTER and not self._side_by_side():
            self._stop.set()
        if self._direct:
            return self._work(name)
        got, value, exc = self._ready.get()
        if got is _STOPPED:
            self._direct = True
            self._thread.join()
            self._restore()
            return self._work(name)
        if exc is not None:
            try:
                raise exc
            finally:
                del exc  # (no cycle through the traceback)
        assert got == name
        return value  # type: ignore[return-value]

    def _side_by_side(self) -> bool:
        wall, cpu = self._started
        return time.process_time() - cpu > SIDE_BY_SIDE * (time.perf_counter() - wall)

    def close(self) -> None:
        """Stop reading ahead and wait for the document being read (a few ms at most)."""
        self._stop.set()
        while self._thread.is_alive():
            try:  # (a full queue holds the thread: make room until it sees the stop)
                self._ready.get(timeout=0.05)
            except queue.Empty:
                pass
        self._thread.join()
        self._restore()

    def _restore(self) -> None:
        if sys.getswitchinterval() == min(self._interval, SWITCH_S):
            sys.setswitchinterval(self._interval)
