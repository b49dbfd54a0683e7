"""Import a book file into the library: one use case, atomic, cancellable, with progress.

Steps: hash the file (same file → the existing book, nothing parsed), parse it, cut search
chunks, copy the file into the library folder under a temporary name, then write the book,
its pages, table of contents, chunks and full-text index in ONE transaction and only then
give the copy its final name. A failure or a cancel at any point leaves no rows and no files.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import logging
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.books.chunking import make_chunks
from core.books.limits import DEFAULT_LIMITS, Limits
from core.books.memory import gc_paused, give_back_memory
from core.books.parse import check_file, detect_format, parse_book
from core.errors import BookCode, BookError, MarginError
from core.progress import CancelToken, ProgressCallback, no_progress
from core.store import owner
from core.store.book_info import BookInfo
from core.store.db_base import explain

if TYPE_CHECKING:  # (``margin import`` loads no peewee: core.store.import_library)
    from core.store.import_library import ImportLibrary
    from core.store.library import Library

log = logging.getLogger("margin.import")
TEMP_PREFIX = ".importing-"
STALE_TEMP_S = 5.0  # a temporary copy is locked within microseconds of being created


def _temporary(folder: Path, prefix: str) -> tuple[int, str]:
    """``tempfile.mkstemp(prefix=prefix, dir=folder)``: a new file only this user can read,
    open for writing, and its name. (Not tempfile and shutil themselves: with what they
    load, 3 ms of importing a 3 MB text, issue 41.)"""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    for _ in range(100):
        name = os.path.abspath(folder / f"{prefix}{os.urandom(6).hex()}")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def _copy(path: Path, fd: int) -> None:
    """The file at ``path`` written to ``fd`` (from its start) and flushed to the disk: by
    the kernel (``sendfile``, as shutil copies on Linux: the book never passes through this
    process's memory), else read and written a block at a time."""
    with os.fdopen(os.dup(fd), "wb", buffering=0) as out, path.open("rb", buffering=0) as src:
        size = os.fstat(src.fileno()).st_size
        done = 0
        try:
            while done < size and (
                sent := os.sendfile(out.fileno(), src.fileno(), done, size - done)
            ):
                done += sent
        except OSError:  # (not every system sends file to file)
            pass
        out.seek(done)
        src.seek(done)
        while block := src.read(1024 * 1024):
            view = memoryview(block)
            while view:  # (an unbuffered write may write part of it)
                view = view[out.write(view) or 0 :]
        os.fsync(out.fileno())


def request_vectors(db: Any) -> None:
    """``core.search.vector_indexer.request_vectors``, loaded only where it may start
    something: a short command's library (``margin import``) starts no background work.
    (Deep search's vectors of the reader's part are asked for when the book is opened,
    ``want_ahead``, not here: a library of 500 books synced from calibre would otherwise
    queue 500 of them, about 12 s of CPU each.)"""
    if getattr(db, "margin_no_background", False):
        return
    from core.search.vector_indexer import request_vectors as request

    request(db)


def _cool(db: Any) -> None:
    """The import failed: the vectors worker started ahead of it (``opens``) ends."""
    if getattr(db, "margin_no_background", False):
        return
    from core.search.vector_indexer import cool_for

    cool_for(db)


@dataclasses.dataclass(frozen=True)
class ImportResult:
    """An imported book, or the one already in the library."""

    book: BookInfo
    already_present: bool
    problems: str = ""  # what the parser repaired (not-well-formed XHTML), for people


def _not_a_file(path: Path) -> BookError:
    return BookError(
        BookCode.UNSUPPORTED,
        f"{path.name} is not a regular file (it is a device, a pipe or a socket).",
        hint="Import a book file saved on disk.",
    )


def file_sha256(path: Path, cancel: CancelToken | None = None) -> str:
    """The file's SHA-256. Only a regular file is read: it is opened without blocking (a
    FIFO would wait for a writer) and checked before the first byte is read (a device such
    as /dev/zero never ends)."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(path)
            raise _not_a_file(path)
        with os.fdopen(fd, "rb", buffering=0) as fh:
            buffer = bytearray(64 * 1024)  # one small buffer read into (a new megabyte a
            view = memoryview(buffer)  # read: its pages faulted in each time, issue 41)
            while size := fh.readinto(buffer):
                digest.update(view[:size])
                if cancel is not None:
                    cancel.check()
    except FileNotFoundError:
        raise BookError(
            BookCode.NOT_FOUND, f"{path} does not exist.", hint="Check the file name and folder."
        ) from None
    except IsADirectoryError:
        raise BookError(
            BookCode.UNSUPPORTED, f"{path.name} is a folder, not a book file."
        ) from None
    except OSError as exc:
        raise BookError(
            BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
        ) from None
    return digest.hexdigest()


def import_book(
    library: Library | ImportLibrary,
    path: Path | str,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
    password: str | None = None,
    trim_memory: bool = True,
    opens: bool = False,
) -> ImportResult:
    """``password`` opens a protected PDF; it is used in memory and never stored.
    ``trim_memory=False``: the freed memory is not handed back to the system at the end
    (a process that ends right after: ``margin import``). ``opens``: the window opens the
    book next (its vectors worker is readied while it is stored: ``warm_for_import``)."""
    with gc_paused():  # (core.books.memory: the parsed book's objects form no cycles)
        result = _import_book(library, path, progress, cancel, limits, password, opens)
    if trim_memory and not result.already_present:
        give_back_memory()  # the parsed book is freed: hand its pages back to the system
    return result


def _import_book(
    library: Library | ImportLibrary,
    path: Path | str,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    password: str | None,
    opens: bool = False,
) -> ImportResult:
    path = Path(path).expanduser()
    detect_format(path)  # unsupported files fail before anything is read
    check_file(path, limits)  # a regular file within the size limit: nothing can hang or bloat
    progress(0.0, f"Checking {path.name}")
    sha = file_sha256(path, cancel)
    existing = library.book_by_sha256(sha)
    if existing is not None:
        if not existing.file_path or not Path(existing.file_path).is_file():
            existing = _restore_copy(library, existing, path)
        progress(1.0, "Already in your library")
        return ImportResult(existing, already_present=True)

    parsed = parse_book(
        path,
        progress=lambda f, msg: progress(0.02 + f * 0.78, msg),
        cancel=cancel,
        limits=limits,
        password=password,
    )
    checked = _checking(path, parsed.extra, limits)  # the XML of an EPUB's pages
    # the chapters' blocks are not stored (their pages are): let them go before the chunks
    # are cut and the pages packed, which then reuse their memory (a 3 MB text: 3.6 MB less
    # at the peak, 900 fewer page faults, issue 41)
    parsed = dataclasses.replace(parsed, chapters=())
    if cancel is not None:
        cancel.check()
    progress(0.82, "Preparing search")
    chunks = make_chunks(parsed.pages)
    if cancel is not None:
        cancel.check()
    if opens and not getattr(library.db, "margin_no_background", False):
        from core.search.vector_indexer import warm_for_import

        warm_for_import(library.db, chunks)

    books_dir = library.paths.books
    books_dir.mkdir(parents=True, exist_ok=True)
    final = books_dir / f"{sha}{path.suffix.lower()}"
    fd, tmp_name = _temporary(books_dir, TEMP_PREFIX)
    tmp = Path(tmp_name)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held until the end: tidy-up leaves a live import's copy
    published = False
    try:
        _copy(path, fd)
        progress(0.86, "Saving to your library")

        def publish() -> None:
            nonlocal published
            os.replace(tmp, final)
            published = True

        book_id = library.add_book(
            parsed=parsed,
            chunks=chunks,
            sha256=sha,
            original_path=str(path.resolve()),
            file_path=str(final),
            file_size=path.stat().st_size,
            title=parsed.title.strip() or path.stem,
            before_commit=publish,
            cancel=cancel,
            progress=progress,
        )
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if opens:
            _cool(library.db)
        if published and not _named(library, sha):
            final.unlink(missing_ok=True)  # renamed, then the COMMIT failed (a full disk)
        known = explain(exc) if isinstance(exc, Exception) else None
        if known is not None and known is not exc:
            raise known from exc
        raise
    finally:
        os.close(fd)
    request_vectors(library.db)  # search by meaning follows in the background
    progress(1.0, "Ready")
    log.info(
        "imported %s as book %d (%d pages, %d chunks)",
        path.name,
        book_id,
        len(parsed.pages),
        len(chunks),
    )
    problems = checked()
    del parsed, chunks
    return ImportResult(library.get_book(book_id), already_present=False, problems=problems)


def _checking(path: Path, extra: dict[str, str], limits: Limits) -> Callable[[], str]:
    """The book's problems (``ImportResult.problems``): those of an EPUB's pages that the
    parse left unchecked are looked at while the book is stored (core.books.epubcheck,
    loaded only for such a book)."""
    if "unchecked" not in extra:
        problems = extra.get("problems", "")
        return lambda: problems
    from core.books.epubcheck import checking

    return checking(path, extra, limits)


def _named(library: Library | ImportLibrary, sha: str) -> bool:
    """Whether a book row names the copy of ``sha`` (True when that cannot be told: a copy
    is never deleted on a guess)."""
    try:
        return library.book_by_sha256(sha) is not None
    except Exception:
        return True


def _restore_copy(library: Library | ImportLibrary, book: BookInfo, path: Path) -> BookInfo:
    """The book is in the library but its copy is gone: put the file back."""
    books_dir = library.paths.books
    books_dir.mkdir(parents=True, exist_ok=True)
    final = books_dir / f"{book.sha256}{path.suffix.lower()}"
    fd, tmp_name = _temporary(books_dir, TEMP_PREFIX)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        _copy(path, fd)
        os.replace(tmp_name, final)
    except BaseException as exc:
        Path(tmp_name).unlink(missing_ok=True)
        known = explain(exc) if isinstance(exc, Exception) else None
        if known is not None:
            raise known from exc
        raise
    finally:
        os.close(fd)
    library.set_file_path(book.id, str(final))
    log.info("restored the missing copy of book %d from %s", book.id, path.name)
    return library.get_book(book.id)


def stale_temporary(entry: Path, now: float | None = None) -> bool:
    """Whether ``entry`` is a temporary copy an import that is gone left behind: not locked
    by a live import, and older than ``STALE_TEMP_S`` (the moment between creating a copy
    and locking it)."""
    if not entry.name.startswith(TEMP_PREFIX):
        return False
    try:
        age = (time.time() if now is None else now) - entry.stat().st_mtime
    except OSError:
        return False
    return age > STALE_TEMP_S and not owner.is_locked(entry)


def recover_incomplete(library: Library | ImportLibrary) -> int:
    """Remove what an interrupted import left: books still marked "importing" and temporary
    copies whose import is gone. Never a finished copy, even one no book names (a lost
    database; see ``unlisted_copies`` and ``recover_library``), and never what a live
    import in another process owns. Returns how many things were removed."""
    removed = library.remove_unfinished()
    books_dir = library.paths.books
    if books_dir.is_dir():
        for entry in books_dir.iterdir():
            if entry.is_file() and stale_temporary(entry):
                entry.unlink(missing_ok=True)
                removed += 1
    unlisted = unlisted_copies(library)
    if unlisted:
        log.warning(
            "%d book copies in %s are not in the library database; "
            "'margin recover-library' adds them back",
            len(unlisted),
            books_dir,
        )
    return removed


def reimport_book(
    library: Library,
    book_id: int,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
    password: str | None = None,
) -> BookInfo:
    """Read a book again from the library's own copy with today's readers (contents and
    chapter pages of books imported by older versions); notes, highlights and conversations
    stay, and page numbers may move a little."""
    book = library.get_book(book_id)
    copy = Path(book.file_path) if book.file_path else None
    if copy is None or not copy.is_file():
        raise BookError(
            BookCode.NOT_FOUND,
            f'The library\'s copy of "{book.title}" is missing, so it cannot be read again.',
            hint="Import the original file again.",
        )
    parsed = parse_book(
        copy,
        progress=lambda f, msg: progress(f * 0.8, msg),
        cancel=cancel,
        limits=limits,
        password=password,
    )
    from core.books.ocr import keep_recognised

    parsed = keep_recognised(library, book, parsed)  # picture pages keep their OCR text
    chunks = make_chunks(parsed.pages)
    progress(0.9, "Saving to your library")
    updated = library.replace_content(book_id, parsed=parsed, chunks=chunks)
    request_vectors(library.db)
    progress(1.0, "Ready")
    log.info("read book %d again (%d pages)", book_id, updated.page_count)
    del parsed, chunks
    give_back_memory()
    return updated


def unlisted_copies(library: Library | ImportLibrary) -> list[Path]:
    """Finished copies in the books folder that no book names (the database was lost or
    replaced), oldest first."""
    books_dir = library.paths.books
    if not books_dir.is_dir():
        return []
    known = library.file_names()
    skipped = _not_books(books_dir)
    found = [
        entry
        for entry in books_dir.iterdir()
        if not entry.name.startswith(".")
        and entry.name not in known
        and not entry.is_symlink()  # a link planted there never brings in another file
        and entry.is_file()
        and _identity(entry) not in skipped
    ]
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))


NOT_BOOKS = ".not-books.json"  # copies recovery could not read: not offered again unchanged


def _identity(entry: Path) -> tuple[str, int, int]:
    try:
        stat = entry.stat(follow_symlinks=False)
    except OSError:
        return (entry.name, -1, -1)
    return (entry.name, stat.st_size, stat.st_mtime_ns)


def _not_books(books_dir: Path) -> set[tuple[str, int, int]]:
    try:
        text = (books_dir / NOT_BOOKS).read_text(encoding="utf-8")
    except OSError:
        return set()
    import json  # (only where there is such a file: an import loads no json)

    try:
        return {(str(n), int(s), int(t)) for n, s, t in json.loads(text)}
    except (ValueError, TypeError):
        return set()


def _remember_not_books(books_dir: Path, failed: list[Path]) -> None:
    """Remember copies that could not be imported (by name, size and time), so recovery and
    the "not in the library" notices do not report them again until they change."""
    known = {i for i in _not_books(books_dir) if (books_dir / i[0]).exists()}
    known |= {_identity(p) for p in failed}
    import json

    try:
        fd, tmp = _temporary(books_dir, ".not-books.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(sorted(known), out)
        os.replace(tmp, books_dir / NOT_BOOKS)
    except OSError:
        log.warning("could not remember the copies that are not books", exc_info=True)


@dataclasses.dataclass(frozen=True)
class RecoveredCopy:
    """A copy found again by ``recover_library``: its book, or why it is not one."""

    path: Path
    result: ImportResult | None
    error: MarginError | None


def recover_library(
    library: Library,
    *,
    progress: Callable[[int, int, Path], None] = lambda done, total, path: None,
    cancel: CancelToken | None = None,
) -> list[RecoveredCopy]:
    """Import again every copy in the books folder that no book names. A copy that cannot be
    imported is kept and reported, never deleted."""
    copies = unlisted_copies(library)
    recovered: list[RecoveredCopy] = []
    for i, copy in enumerate(copies):
        progress(i, len(copies), copy)
        try:
            result = import_book(library, copy, cancel=cancel)
        except MarginError as err:
            recovered.append(RecoveredCopy(copy, None, err))
            continue
        recovered.append(RecoveredCopy(copy, result, None))
    failed = [r.path for r in recovered if r.error is not None and r.error.code != "cancelled"]
    if failed:
        _remember_not_books(library.paths.books, failed)
    return recovered
