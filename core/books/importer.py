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
from core.books.parse import detect_format, parse_book
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress
from core.store import models as m
from core.store.library import BookInfo, Library

log = logging.getLogger("margin.import")

BATCH = 500


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
    if not path.exists():
        raise BookError(
            BookCode.NOT_FOUND, f"{path} does not exist.", hint="Check the file name and folder."
        )
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
        with library.db.atomic():
            now = m.utcnow()
            row = m.Book.create(
                title=parsed.title.strip() or path.stem,
                author=parsed.author.strip(),
                language=parsed.language.strip(),
                format=parsed.format.value,
                sha256=sha,
                original_path=str(path.resolve()),
                file_path=str(final),
                file_size=path.stat().st_size,
                page_count=len(parsed.pages),
                page=1,
                read_to=1,
                status="importing",
                added_at=now,
                updated_at=now,
            )
            book_id = row.id
            page_rows = [
                (book_id, p.number, p.label, p.chapter, p.text, p.html) for p in parsed.pages
            ]
            for i in range(0, len(page_rows), BATCH):
                m.Page.insert_many(
                    page_rows[i : i + BATCH],
                    fields=[
                        m.Page.book,
                        m.Page.number,
                        m.Page.label,
                        m.Page.chapter,
                        m.Page.text,
                        m.Page.html,
                    ],
                ).execute()
            if cancel is not None:
                cancel.check()
            toc_rows = [(book_id, i, t.title, t.level, t.page) for i, t in enumerate(parsed.toc)]
            if toc_rows:
                m.TocEntry.insert_many(
                    toc_rows,
                    fields=[
                        m.TocEntry.book,
                        m.TocEntry.ordinal,
                        m.TocEntry.title,
                        m.TocEntry.level,
                        m.TocEntry.page,
                    ],
                ).execute()
            progress(0.92, "Indexing for search")
            cursor = library.db.cursor()
            cursor.executemany(
                "INSERT INTO chunk (book_id, ordinal, chapter, start_page, end_page, text) VALUES (?, ?, ?, ?, ?, ?)",
                [(book_id, c.ordinal, c.chapter, c.start_page, c.end_page, c.text) for c in chunks],
            )
            cursor.execute(
                "INSERT INTO chunk_index (rowid, text) SELECT id, text FROM chunk WHERE book_id = ?",
                (book_id,),
            )
            if cancel is not None:
                cancel.check()
            m.Book.update(status="ready").where(m.Book.id == book_id).execute()
            os.replace(tmp, final)
            committed = True
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
    removed = 0
    with library.db.atomic():
        stale = [b.id for b in m.Book.select(m.Book.id).where(m.Book.status != "ready")]
        for book_id in stale:
            chunk_ids = m.Chunk.select(m.Chunk.id).where(m.Chunk.book == book_id)
            m.ChunkIndex.delete().where(m.ChunkIndex.rowid.in_(chunk_ids)).execute()
            m.Book.delete().where(m.Book.id == book_id).execute()
            removed += 1
    books_dir = library.paths.books
    if books_dir.is_dir():
        known = {Path(b.file_path).name for b in m.Book.select(m.Book.file_path)}
        for entry in books_dir.iterdir():
            if entry.is_file() and entry.name not in known:
                entry.unlink(missing_ok=True)
                removed += 1
    return removed
