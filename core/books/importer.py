"""Import a book file into the library: one use case, atomic, cancellable, with progress.

Steps: hash the file (same file → the existing book, nothing parsed), parse it, cut search
chunks, copy the file into the library folder under a temporary name, then write the book,
its pages, table of contents, chunks and full-text index in ONE transaction and only then
give the copy its final name. A failure or a cancel at any point leaves no rows and no files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.books.chunking import make_chunks
from core.books.limits import DEFAULT_LIMITS, Limits
from core.books.parse import check_file, detect_format, parse_book
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress
from core.store.library import BookInfo, Library

log = logging.getLogger("margin.import")


@dataclass(frozen=True)
class ImportResult:
    book: BookInfo
    already_present: bool


def file_sha256(path: Path, cancel: CancelToken | None = None) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while block := fh.read(1024 * 1024):
                digest.update(block)
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
    library: Library,
    path: Path | str,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportResult:
    path = Path(path).expanduser()
    detect_format(path)  # unsupported files fail before anything is read
    check_file(path, limits)  # a regular file within the size limit: nothing can hang or bloat
    progress(0.0, f"Checking {path.name}")
    sha = file_sha256(path, cancel)
    existing = library.book_by_sha256(sha)
    if existing is not None:
        progress(1.0, "Already in your library")
        return ImportResult(existing, already_present=True)

    parsed = parse_book(
        path, progress=lambda f, msg: progress(0.02 + f * 0.78, msg), cancel=cancel, limits=limits
    )
    if cancel is not None:
        cancel.check()
    progress(0.82, "Preparing search")
    chunks = make_chunks(parsed.pages)
    if cancel is not None:
        cancel.check()

    books_dir = library.paths.books
    books_dir.mkdir(parents=True, exist_ok=True)
    final = books_dir / f"{sha}{path.suffix.lower()}"
    fd, tmp_name = tempfile.mkstemp(prefix=".importing-", dir=books_dir)
    tmp = Path(tmp_name)
    committed = False
    try:
        with os.fdopen(fd, "wb") as out, path.open("rb") as src:
            shutil.copyfileobj(src, out, 1024 * 1024)
            out.flush()
            os.fsync(out.fileno())
        progress(0.86, "Saving to your library")

        def publish() -> None:
            nonlocal committed
            os.replace(tmp, final)
            committed = True

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
    except BaseException:
        if committed:
            raise
        tmp.unlink(missing_ok=True)
        if final.exists() and library.book_by_sha256(sha) is None:
            final.unlink(missing_ok=True)
        raise
    progress(1.0, "Ready")
    log.info(
        "imported %s as book %d (%d pages, %d chunks)",
        path.name,
        book_id,
        len(parsed.pages),
        len(chunks),
    )
    return ImportResult(library.get_book(book_id), already_present=False)


def recover_incomplete(library: Library) -> int:
    """Remove what an interrupted import may have left: books still marked "importing",
    temporary copies, and copies no book refers to. Returns how many things were removed."""
    removed = library.remove_unfinished()
    books_dir = library.paths.books
    if books_dir.is_dir():
        known = library.file_names()
        for entry in books_dir.iterdir():
            if entry.is_file() and entry.name not in known:
                entry.unlink(missing_ok=True)
                removed += 1
    return removed


def reimport_book(
    library: Library,
    book_id: int,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
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
        copy, progress=lambda f, msg: progress(f * 0.8, msg), cancel=cancel, limits=limits
    )
    chunks = make_chunks(parsed.pages)
    progress(0.9, "Saving to your library")
    updated = library.replace_content(book_id, parsed=parsed, chunks=chunks)
    progress(1.0, "Ready")
    log.info("read book %d again (%d pages)", book_id, updated.page_count)
    return updated
