"""Progress reporting and cooperative cancellation for long use cases (import, indexing)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from core.errors import BookCode, BookError

ProgressCallback = Callable[[float, str], None]
"""Called with a fraction in [0, 1] and a short message for people."""


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores its reports."""


class CancelToken:
    """Thread-safe flag a UI sets and a worker checks between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise ``BookError(CANCELLED)`` when cancellation was asked for."""
        if self._event.is_set():
            raise BookError(BookCode.CANCELLED, "The import was cancelled.")
