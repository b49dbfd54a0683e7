"""Giving memory back after a big job (an import): Python frees the parsed book, but glibc's
allocator keeps the freed pages for later (measured: 115 MB of 289 MB after importing a
16 MiB EPUB). ``malloc_trim(0)`` returns them to the system. A no-op elsewhere."""

from __future__ import annotations

import gc
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)
_libc: Any = None


def _trim_function() -> Any:
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            import ctypes  # (here: a command that never trims does not load it)
            import ctypes.util

            try:  # glibc's name first: find_library runs ldconfig in a child process
                try:
                    libc = ctypes.CDLL("libc.so.6")
                except OSError:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                _libc = libc.malloc_trim  # glibc only: musl has none
                _libc.argtypes = [ctypes.c_size_t]
                _libc.restype = ctypes.c_int
            except (OSError, AttributeError):
                _libc = False
    return _libc


def give_back_memory() -> bool:
    """Hand freed heap pages back to the system; True when the allocator can (glibc's
    ``malloc_trim``, about 0.1 ms). Reference counting has already freed the parsed book
    (no ``gc.collect()``: 5-20 ms for nothing)."""
    trim = _trim_function()
    if not trim:
        return False
    try:
        trim(0)  # returns 1 when it released something, 0 when there was nothing to release
        return True
    except Exception:  # never let tidying memory break an import
        log.debug("malloc_trim failed", exc_info=True)
        return False


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a book is parsed and stored: those steps make
    hundreds of thousands of objects that live on and form no cycles, so every collection
    that their count sets off walks them all for nothing (4-5 % of parsing a 16 MiB EPUB,
    of importing a 3 MB text). Reference counting still frees everything; collection
    resumes at the end (unless something else had turned it off: nested, it is the
    outermost caller that turns it back on).

    Only on the main thread, where ``margin import`` works: the switch is process-wide,
    and in the window an import runs on a worker for as long as a large PDF takes while
    the window's own thread goes on making (and needing to collect) cycles."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
