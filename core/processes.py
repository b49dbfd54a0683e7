"""Margin's worker processes (the PDF text workers, the background vectors worker) and what
they leave behind.

multiprocessing starts its resource-tracker process with the first spawned worker, and it
would otherwise stay for the whole session (issue 27: no idle worker process 10 s after an
import). ``stop_resource_tracker`` ends it once no worker is left: each kind of worker says
whether it still has some (``register``), and no multiprocessing child may be alive. The
next worker started starts it again (~20 ms, on that worker's thread).

Stopping the tracker unlinks every semaphore still registered with it, so it must never run
between the moment a worker's queues are made and the moment that worker counts as in use:
both happen under ``starting()`` (a PDF import that began while the vectors worker was
ending failed with "could not start the helper process", its pool's semaphore gone).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

NICE = 10  # the vectors worker's priority: below the window's, so reading stays smooth

_in_use: list[Callable[[], bool]] = []
_lock = threading.RLock()


def register(in_use: Callable[[], bool]) -> None:
    """``in_use()`` is True while a kind of worker holds processes or their queues (a PDF
    pool, even between its tasks): the tracker is kept for them."""
    with _lock:
        _in_use.append(in_use)


@contextmanager
def starting() -> Iterator[None]:
    """Hold this while making a worker's processes, pools or queues, until the worker
    counts as in use (its ``register`` callback says so, or its process is alive): the
    resource tracker is not stopped meanwhile."""
    with _lock:
        yield


def tracker_needed() -> bool:
    """Whether something in this process still needs multiprocessing's resource tracker (a
    worker in use, a live child process, a semaphore): ``stop_resource_tracker`` keeps it
    then."""
    import gc
    import multiprocessing

    with _lock:
        if any(in_use() for in_use in _in_use) or multiprocessing.active_children():
            return True
        gc.collect()
        return _semaphores_alive()


def stop_resource_tracker() -> bool:
    """End multiprocessing's resource tracker when no worker is left; True when it was
    running and has ended."""
    import gc
    import multiprocessing
    from multiprocessing import resource_tracker

    with _lock:
        if any(in_use() for in_use in _in_use) or multiprocessing.active_children():
            return False
        tracker = resource_tracker._resource_tracker
        if getattr(tracker, "_fd", None) is None:
            return False
        gc.collect()  # finished pools' queues unregister their semaphores when collected
        if _semaphores_alive():
            return False  # a pool still shutting down: stopping would unlink its semaphores
        stop = getattr(tracker, "_stop", None)
        if stop is None:
            return False
        try:
            stop()
        except Exception:
            log.debug("the resource tracker did not stop", exc_info=True)
            return False
        return True


def _semaphores_alive() -> bool:
    """True while a semaphore this process made is still in use (a pool shutting down on
    another thread holds its queues' locks): the tracker unlinks every semaphore still
    registered when it stops, and the semaphore's own clean-up then fails."""
    from multiprocessing import synchronize, util

    registry = getattr(util, "_finalizer_registry", None)
    cleanup = getattr(synchronize.SemLock, "_cleanup", None)
    if registry is None or cleanup is None:
        return True  # cannot tell: keep the tracker
    return any(getattr(final, "_callback", None) is cleanup for final in list(registry.values()))


def worker_nice() -> int:
    """How far background workers lower their priority (``MARGIN_WORKER_NICE``, else NICE)."""
    raw = os.environ.get("MARGIN_WORKER_NICE", "").strip()
    try:
        return max(0, min(19, int(raw))) if raw else NICE
    except ValueError:
        log.warning("MARGIN_WORKER_NICE=%r is not a number from 0 to 19: using %d", raw, NICE)
        return NICE


def lower_priority(step: int | None = None) -> None:
    """This process (a background worker) runs after everything else on the machine: the
    window stays smooth while a book's vectors are computed. Where priorities cannot be
    lowered, nothing changes. ``MARGIN_WORKER_NICE`` (0–19) sets how far: the test suite sets
    0, as its parallel workers keep both cores busy and a niced worker would wait minutes."""
    if step is None:
        step = worker_nice()
    if step <= 0:
        return
    try:
        os.nice(step)
    except (AttributeError, OSError):  # no os.nice (Windows), or not allowed
        log.debug("the worker's priority could not be lowered", exc_info=True)
