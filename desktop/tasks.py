"""The one pattern for background work in the window.

* Coroutines run on the qasync loop through ``TaskKeeper.start``: it keeps a reference to every
  task (asyncio only keeps weak ones), cancels the previous task started under the same key
  (a new question replaces the old one, like a Stop click), and sends unexpected errors to
  ``sys.excepthook`` so the global hook logs them and shows a short dialog.
* Blocking work (parsing, importing, big queries) goes to a thread of ``pool()``: awaited from
  a coroutine with ``run_blocking``, or with ``in_background(fn, then=callback)`` when no
  coroutine waits for it (the result comes back through a queued Qt signal, so it arrives on
  the UI thread even when someone calls ``processEvents`` inside a coroutine, which qasync
  0.28 cannot survive: a task stepped from there is lost).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sys
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, Qt, Signal

if TYPE_CHECKING:
    import asyncio

# asyncio is imported where it is used: the window is painted before it loads (issue 41)
log = logging.getLogger("margin.tasks")

_executor: ThreadPoolExecutor | None = None


def pool() -> ThreadPoolExecutor:
    """The window's one pool of worker threads (also the loop's default executor)."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="margin-worker")
    return _executor


# the work kept until it ends, whatever it returns
type _Task = asyncio.Task[object]
type _Work = Future[object]


class Lane:
    """Work that may come in bursts (covers of a whole library) on the one pool, at most
    ``limit`` pieces at a time, so the rest of the pool stays free for the reads a reader
    waits for (a conversation, a page). Pieces queue in order; none is dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._running = 0
        self._waiting: deque[tuple[Callable[..., object], tuple[object, ...]]] = deque()
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., object], /, *args: object) -> None:
        with self._lock:
            if self._running >= self.limit:
                self._waiting.append((fn, args))
                return
            self._running += 1
        pool().submit(self._drain, fn, args)

    def _drain(self, fn: Callable[..., object], args: tuple[object, ...]) -> None:
        while True:
            try:
                fn(*args)
            except Exception:
                log.exception("background work failed")
            with self._lock:
                if not self._waiting:
                    self._running -= 1
                    return
                fn, args = self._waiting.popleft()


async def run_blocking[T](fn: Callable[..., T], /, *args: object, **kwargs: object) -> T:
    """Run ``fn(*args, **kwargs)`` in a worker thread and await its result on the loop."""
    import asyncio

    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(pool(), functools.partial(fn, *args, **kwargs))


class _Delivery(QObject):
    """Lives on the UI thread; workers emit on it and Qt queues the call there."""

    done = Signal(object)


_delivery: _Delivery | None = None
_pending: set[_Work] = set()  # in_background work not yet delivered
_drained: asyncio.Event | None = None  # set when _pending empties (see drain)


def _deliver(payload: object) -> None:
    assert isinstance(payload, tuple)
    then, failed, future = payload
    _pending.discard(future)
    if not _pending and _drained is not None:
        _drained.set()
    try:
        result = future.result()
    except Exception as exc:
        if failed is None:
            sys.excepthook(type(exc), exc, exc.__traceback__)
        else:
            failed(exc)
        return
    then(result)


def in_background[T](
    fn: Callable[..., T],
    /,
    *args: object,
    then: Callable[[T], None],
    failed: Callable[[Exception], None] | None = None,
) -> Future[T]:
    """Run ``fn(*args)`` on a worker thread; ``then(result)`` (or ``failed(error)``) runs on
    the UI thread afterwards. Call from the UI thread."""
    global _delivery
    if _delivery is None:
        _delivery = _Delivery()
        _delivery.done.connect(_deliver, Qt.ConnectionType.QueuedConnection)
    delivery = _delivery
    future = pool().submit(fn, *args)
    _pending.add(cast("_Work", future))  # kept whatever it returns
    future.add_done_callback(lambda f: delivery.done.emit((then, failed, f)))
    return future


def reading() -> bool:
    """Whether ``in_background`` work is under way (or its result not yet delivered)."""
    return bool(_pending)


async def drain(grace: float = 5.0) -> None:
    """Wait (bounded) until every ``in_background`` result has been delivered: before the
    library closes, so no read lands on a closed database."""
    global _drained
    if not _pending:
        return
    import asyncio

    _drained = asyncio.Event()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_drained.wait(), grace)


class TaskKeeper:
    """Owns the window's asyncio tasks."""

    def __init__(self) -> None:
        self._tasks: set[_Task] = set()
        self._keyed: dict[str, _Task] = {}

    def start[T](
        self, coro: Coroutine[object, object, T], *, key: str | None = None, replace: bool = True
    ) -> asyncio.Task[T]:
        """Schedule ``coro``. With ``key`` and ``replace``, cancel the running task of that key."""
        if key is not None and replace:
            old = self._keyed.get(key)
            if old is not None and not old.done():
                old.cancel()
        import asyncio

        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        if key is not None:
            self._keyed[key] = task
        task.add_done_callback(functools.partial(self._finished, key))
        return task

    def running(self, key: str) -> bool:
        task = self._keyed.get(key)
        return task is not None and not task.done()

    def cancel(self, key: str) -> None:
        task = self._keyed.get(key)
        if task is not None and not task.done():
            task.cancel()

    def _finished(self, key: str | None, task: _Task) -> None:
        self._tasks.discard(task)
        if key is not None and self._keyed.get(key) is task:
            del self._keyed[key]
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            sys.excepthook(type(exc), exc, exc.__traceback__)

    @property
    def pending(self) -> int:
        return sum(1 for t in self._tasks if not t.done())

    async def shutdown(self, grace: float = 2.0) -> None:
        """Cancel everything and wait (bounded) for the tasks to finish their clean-up."""
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            import asyncio

            await asyncio.wait(tasks, timeout=grace)


def shutdown_workers() -> None:
    global _executor
    if _executor is not None:
        _executor.shutdown(wait=False, cancel_futures=True)
        _executor = None
