"""Margin's worker processes (the PDF and EPUB text workers, the background vectors worker,
passages mode's sentence worker) and what they leave behind.

The vectors and sentence workers need a pipe only: they are plain Python processes
(``PythonWorker``, below), which bring nothing else along. The PDF and EPUB workers are
``multiprocessing`` ones (pools, queues): multiprocessing starts its resource-tracker process
with the first spawned worker, and it would otherwise stay for the whole session (issue 27:
no idle worker process 10 s after an import). ``stop_resource_tracker`` ends it once no
worker is left: each kind of worker says whether it still has some (``register``), and no
multiprocessing child may be alive. The next worker started starts it again (~20 ms, on
that worker's thread).

Stopping the tracker unlinks every semaphore still registered with it, so it must never run
between the moment a worker's queues are made and the moment that worker counts as in use:
both happen under ``starting()`` (a PDF import that began while another worker was ending
failed with "could not start the helper process", its pool's semaphore gone).
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


# --- workers started as plain Python processes ------------------------------------------------
#
# A ``multiprocessing`` "spawn" process brings multiprocessing's resource tracker with it (a
# second child process, kept until ``stop_resource_tracker``). A worker that needs no shared
# semaphore or queue, only a pipe (the background vectors), is started with ``subprocess``
# instead: ``python -m MODULE`` from the source tree, the app itself with ``FLAG`` in the
# bundle (packaging/launcher.py runs the module's ``main`` then). Both ends speak JSON lines:
# the job on the worker's stdin, its messages on its stdout; its stderr goes nowhere (its
# problems come back as messages and go to the log: never a traceback on a terminal).


def worker_command(module: str, flag: str) -> list[str]:
    """How to start ``module``'s ``main`` as a worker: the bundle (PyInstaller sets
    ``sys.frozen``; its ``sys.executable`` is the app) has no ``python -m``."""
    import sys

    if getattr(sys, "frozen", False):
        return [sys.executable, flag]
    return [sys.executable, "-m", module]


class PythonWorker:
    """A worker process (``worker_command``) and its two pipes; the calls of a
    ``multiprocessing.Process`` that the callers use (``pid``, ``is_alive``, ``terminate``,
    ``join``). ``receive`` gives its messages one at a time."""

    def __init__(self, module: str, flag: str, job: object, *, more: bool = False) -> None:
        """Start the worker and send it ``job``; ``more``: its input stays open for more
        jobs (``send``) until ``close_input``."""
        import subprocess
        import sys
        from pathlib import Path

        env = dict(os.environ)
        root: str | None = None
        if not getattr(sys, "frozen", False):
            root = str(Path(__file__).resolve().parents[1])  # this code's tree, not another's
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self._process = subprocess.Popen(
            worker_command(module, flag),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
        self.pid = self._process.pid
        self._buffer = b""
        self._lines: list[bytes] = []
        self._ended = False
        if not self.send(job) or not more:
            self.close_input()

    def send(self, job: object) -> bool:
        """One more job; False when the worker no longer reads (ended, or its input closed)."""
        import json

        stdin = self._process.stdin
        if stdin is None or stdin.closed:
            return False
        try:
            stdin.write(json.dumps(job).encode("utf-8") + b"\n")
            stdin.flush()
        except (OSError, ValueError):  # it has ended (or stopped reading)
            return False
        return True

    def close_input(self) -> None:
        """No more jobs: the worker ends once those sent are done."""
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:
                pass

    def is_alive(self) -> bool:
        return self._process.poll() is None

    @property
    def exitcode(self) -> int | None:
        """Its exit status once it has ended (a signal's: minus its number), else None."""
        return self._process.poll()

    def terminate(self) -> None:
        if self.is_alive():
            self._process.terminate()

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return
        if self._process.stdout is not None:
            self._process.stdout.close()

    def receive(self, timeout: float) -> object:
        """The worker's next message, or None when none came within ``timeout`` seconds;
        ``EOFError`` once the worker has ended and every message was read."""
        import json
        import select

        while not self._lines:
            if self._ended:
                raise EOFError("the worker has ended")
            stdout = self._process.stdout
            assert stdout is not None
            ready, _, _ = select.select([stdout], [], [], timeout)
            if not ready:
                return None
            block = os.read(stdout.fileno(), 65536)
            if not block:
                self._ended = True
                continue
            *lines, self._buffer = (self._buffer + block).split(b"\n")
            self._lines.extend(line for line in lines if line.strip())
        line = self._lines.pop(0)
        try:
            return json.loads(line)
        except ValueError:  # not a message (something the worker's libraries printed)
            log.debug("the worker wrote %r", line[:200])
            return self.receive(0)


def worker_job() -> object:
    """In a worker: the next job its parent sent (``PythonWorker``); None once its parent
    has sent them all (or has gone)."""
    import json
    import sys

    line = sys.stdin.buffer.readline()
    return json.loads(line) if line.strip() else None


_send_lock = threading.Lock()


def worker_send(message: object) -> None:
    """In a worker: one message to the parent (from any thread); ``BrokenPipeError`` when
    the parent has stopped listening."""
    import json
    import sys

    line = json.dumps(message).encode("utf-8") + b"\n"
    with _send_lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
