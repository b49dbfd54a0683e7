"""The one pattern for background work in the window.

* Coroutines run on the qasync loop through ``TaskKeeper.start``: it keeps a reference to every
  task (asyncio only keeps weak ones), cancels the previous task started under the same key
  (a new question replaces the old one, like a Stop click), and sends unexpected errors to
  ``sys.excepthook`` so the global hook logs them and shows a short dialog.
* Blocking work (parsing, importing, big queries) goes to a thread with ``run_blocking`` and is
  awaited from a coroutine, so results always come back on the UI thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger("margin.tasks")

_executor: ThreadPoolExecutor | None = None


def pool() -> ThreadPoolExecutor:
    """The window's one pool of worker threads (also the loop's default executor)."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="margin-worker")
    return _executor


async def run_blocking[T](fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in a worker thread and await its result on the loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(pool(), functools.partial(fn, *args, **kwargs))


class TaskKeeper:
    """Owns the window's asyncio tasks."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keyed: dict[str, asyncio.Task[Any]] = {}

    def start(
        self, coro: Coroutine[Any, Any, Any], *, key: str | None = None, replace: bool = True
    ) -> asyncio.Task[Any]:
        """Schedule ``coro``. With ``key`` and ``replace``, cancel the running task of that key."""
        if key is not None and replace:
            old = self._keyed.get(key)
            if old is not None and not old.done():
                old.cancel()
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

    def _finished(self, key: str | None, task: asyncio.Task[Any]) -> None:
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
            await asyncio.wait(tasks, timeout=grace)


def shutdown_workers() -> None:
    global _executor
    if _executor is not None:
        _executor.shutdown(wait=False, cancel_futures=True)
        _executor = None
