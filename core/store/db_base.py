"""What opening the library needs without peewee: its pragmas, the lock held while a
process updates its schema, and database conditions said in words for people. ``core.store.db``
opens it with peewee; ``core.store.import_library`` (``margin import``) with the standard
sqlite3 module alone."""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import StorageError

log = logging.getLogger("core.store.db")


def _busy_timeout_s() -> int:
    """How long a write waits for another process holding the library (15 s;
    ``MARGIN_BUSY_TIMEOUT_S`` changes it, which the tests of a locked library use)."""
    try:
        return max(1, min(int(os.environ.get("MARGIN_BUSY_TIMEOUT_S", "15")), 600))
    except ValueError:
        return 15


BUSY_TIMEOUT_S = _busy_timeout_s()
WAL_LIMIT = 4 * 1024 * 1024  # bytes of write-ahead log kept between transactions
SOFT_HEAP_LIMIT = 12_000_000
PRAGMAS = {
    "busy_timeout": BUSY_TIMEOUT_S * 1000,  # first: the pragmas after it may wait too
    # before WAL, so a new library gets it (an existing one is rewritten once with it, by the
    # migration ``_one_kib_pages``). Each of a library's ~50 tables and indexes, most of them
    # empty, takes one page at least: an empty library is 66 KiB with 1 KiB pages, 224 KiB
    # with 4 KiB and 639 KiB with 16 KiB. The books' rows take the same room either way (a
    # stored page is about 1 KiB, a search-index block 4 KiB, both spilled into overflow
    # pages): the Sherlock Holmes EPUB's library 3.76x the book with 4 KiB pages, 3.19x with
    # 1 KiB; the 16 MiB EPUB's 3.24x and 3.27x (issue 41, tests/bench/bench_dbsize.py).
    # With the search index without positions (migration ``_index_without_positions``, which
    # rewrites the file with these), SQLite's smallest pages, 512 bytes: Sherlock's library
    # 523 KiB with 1 KiB pages (2.07x the book), 492 KiB with 512 bytes (1.94x).
    "page_size": 512,
    "journal_mode": "wal",
    # the write-ahead log grows to the size of the largest transaction (importing a 16 MiB
    # EPUB: 20.5 MB) and SQLite keeps the file that size for as long as the library is open
    # (beside a 19.7 MB database); with a limit it is cut back to it once checkpointed
    "journal_size_limit": WAL_LIMIT,
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -16000,
    # …but all of the process's connections together (the window has one per worker thread)
    # keep at most about this many bytes of SQLite's memory: a 16 MiB EPUB imported and
    # opened left two threads' caches full, 8 MB of the window's 153 (tests/bench/
    # bench_memory.py: 10 s after the import, 153 -> 145 MB); 2 MB caches everywhere would
    # keep 16 MB less but slowed library search by about 7 % (bench_search.py)
    "soft_heap_limit": SOFT_HEAP_LIMIT,
}
_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def explain(exc: BaseException, database: Path | None = None) -> StorageError | None:
    """A ``StorageError`` for people when ``exc`` (or what caused it) is a database or disk
    condition they can act on: the library busy, the disk full, the database damaged."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StorageError):
            return current
        text = str(current).lower()
        if isinstance(current, OSError) and current.errno in _FULL:
            return disk_full()
        if isinstance(current, _database_errors()):
            if "locked" in text or "busy" in text:
                return StorageError(
                    "busy",
                    "The library is busy: another Margin window or command has been writing "
                    f"to it for more than {BUSY_TIMEOUT_S} seconds.",
                    hint="Try again when it has finished, or close the other Margin.",
                )
            if "disk is full" in text or "database or disk is full" in text:
                return disk_full()
            if "readonly" in text or "read-only" in text:
                return read_only()
            if "user-defined function raised exception" in text:
                # the only functions are the unpackers of stored text (margin_text,
                # margin_chunk): what they were given does not unpack
                return damaged_text("some of a book's stored text")
            if "not a database" in text or "file is encrypted" in text:
                # nothing in it can be read: only then is starting afresh the advice
                return StorageError(
                    "corrupt",
                    f"The library database{f' {database}' if database else ''} is damaged "
                    "and cannot be read.",
                    hint="Restore library.sqlite3 from a backup, or move it away and run "
                    "'margin recover-library' to add the books again from their copies.",
                )
            if (
                "malformed" in text
                or "corrupt" in text
                or "vtable constructor failed" in text  # the index's own records (issue 46)
                or "invalid fts5 file format" in text
            ):
                # usually the search index (derived data): repair rebuilds it in place;
                # never advise anything that discards notes while the file still opens
                return StorageError(
                    "corrupt",
                    f"Part of the library database{f' {database}' if database else ''} is "
                    "damaged (most often the search index).",
                    hint=REPAIR_HINT,
                )
        current = current.__cause__ or current.__context__
    return None


REPAIR_HINT = (
    "Repair it with 'margin repair --all' (or Book › Repair search index): the index and "
    "damaged book text are rebuilt from the books' copies, and notes, highlights and "
    "conversations are kept. If that does not help, restore library.sqlite3 from a backup."
)


def damaged_text(what: str, book_id: int | None = None) -> StorageError:
    """Stored book text (or its search index) that no longer reads: the file was damaged
    there. Repairing rebuilds both from the book's copy."""
    book = str(book_id) if book_id is not None else "--all"
    return StorageError(
        "corrupt",
        f"The library database is damaged: {what} cannot be read.",
        hint=f"Repair it with 'margin repair {book}' (or Book › Repair search index); "
        "notes, highlights and conversations are kept.",
    )


def read_only() -> StorageError:
    return StorageError(
        "read_only",
        "The library folder is read-only: Margin can show your books, notes and "
        "conversations, but cannot save anything there.",
        hint="Make the folder writable (or choose another with --data-dir) to import books, "
        "take notes or ask questions.",
    )


def disk_full() -> StorageError:
    return StorageError(
        "disk_full",
        "The disk is full: Margin could not save to its library.",
        hint="Free some space on the disk and try again.",
    )


def _database_errors() -> tuple[type[BaseException], ...]:
    """sqlite3's errors, and peewee's when it is loaded (no peewee error exists before)."""
    peewee = sys.modules.get("peewee")
    return (sqlite3.Error,) if peewee is None else (sqlite3.Error, peewee.DatabaseError)


@contextmanager
def update_lock(path: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Held while one process updates the library's schema: another Margin (a second
    window, a command) waits here, saying so through ``on_wait``, instead of running into
    the update's long transactions and failing as "busy". A folder where the lock cannot
    be made (read-only) gets no lock: nothing can be updated there anyway."""
    lock = path.with_name(path.name + ".update-lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another process is updating the library; waiting for it")
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
