"""Margin's worker processes (the PDF text workers, the background vectors worker) and what
they leave behind.

multiprocessing starts its resource-tracker process with the first spawned worker, and it
would otherwise stay for the whole session (issue 27: no idle worker process 10 s after an
import). ``stop_resource_tracker`` ends it once no worker is left: each kind of worker says
whether it still has some (``register``), and no multiprocessing child may be alive. The
next worker started starts it again (~20 ms, on that worker's thread).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

NICE = 10  # the vectors worker's priority: below the window's, so reading stays smooth

_in_use: list[Callable[[], bool]] = []
_lock = threading.Lock()


def register(in_use: Callable[[], bool]) -> None:
    """``in_use()`` is True while a kind of worker holds processes or their queues (a PDF
    pool, even between its tasks): the tracker is kept for them."""
    with _lock:
        _in_use.append(in_use)


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
        stop = getattr(tracker, "_stop", None)
        if stop is None:
            return False
        try:
            stop()
        except Exception:
            log.debug("the resource tracker did not stop", exc_info=True)
            return False
        return True


def lower_priority(step: int = NICE) -> None:
    """This process (a background worker) runs after everything else on the machine: the
    window stays smooth while a book's vectors are computed. Where priorities cannot be
    lowered, nothing changes."""
    try:
        os.nice(step)
    except (AttributeError, OSError):  # no os.nice (Windows), or not allowed
        log.debug("the worker's priority could not be lowered", exc_info=True)
