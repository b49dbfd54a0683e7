"""A little disk space kept in reserve beside the library (issue 46 item 3): when the disk
fills while an answer is written, the reserve is given back so the answer (or at least the
fact that it could not be saved) still reaches the library. Without it, SQLite could not
write a byte, and a restarted window said "Margin was closed before this answer finished"
about an answer the full disk had lost. It is made again at the next start."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from core.domain.messages import ErrorInfo

log = logging.getLogger(__name__)

NAME = "space-reserve"
SIZE = 512 * 1024  # room for a long answer's pages in the library's write-ahead log


def ensure(folder: Path) -> None:
    """Make the reserve in ``folder`` when it is missing (a read-only or full disk: none)."""
    path = folder / NAME
    try:
        if path.stat().st_size >= SIZE:
            return
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        os.write(fd, bytes(SIZE))  # real blocks (a sparse file would free nothing)
        os.fsync(fd)
    except OSError:
        log.info("no disk space kept in reserve in %s", folder)
        _remove(path)
    finally:
        os.close(fd)


def release(folder: Path) -> bool:
    """Give the reserve back to the disk; True when there was one."""
    return _remove(folder / NAME)


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    log.warning("the disk is full: the space kept in reserve was given back")
    return True


KEPT = ErrorInfo(
    "disk_full",
    "The disk is full: this answer stops where the disk filled.",
    "Free some space on the disk, then press Retry for the whole answer.",
)
SHOWN_ONLY = ErrorInfo(
    "disk_full",
    "The disk is full: this answer could not be saved; it is shown until Margin closes.",
    "Free some space on the disk, then press Retry.",
)
UNSAVED = ErrorInfo(
    "disk_full",
    "This answer could not be saved: the disk was full.",
    "Free some space on the disk, then press Retry.",
)


def save_when_full(
    folder: Path,
    save: Callable[[ErrorInfo], int | None],
    mark: Callable[[ErrorInfo], None],
) -> tuple[int | None, ErrorInfo]:
    """After saving an answer failed on a full disk: give the reserve back and ``save`` the
    answer again (what arrived, with ``KEPT``); when that fails too, ``mark`` its run as lost
    to the full disk (``UNSAVED``, a few bytes). Returns the answer's id (None when it could
    not be saved) and the error to show now."""
    if release(folder):
        try:
            return save(KEPT), KEPT
        except Exception:
            log.warning("the answer could not be saved even with the reserve", exc_info=True)
    try:
        mark(UNSAVED)
    except Exception:
        log.warning("the lost answer could not be marked as lost", exc_info=True)
    return None, SHOWN_ONLY
