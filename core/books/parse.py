"""One entry point from a file to a ``ParsedBook`` with its pages and table of contents."""

from __future__ import annotations

import os
from pathlib import Path
from stat import S_ISDIR, S_ISREG

from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.memory import gc_paused
from core.books.model import BookFormat, ParsedBook, TocItem
from core.books.pages import paginate_blocks, printed_labels
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

SUFFIXES: dict[str, BookFormat] = {
    ".epub": BookFormat.EPUB,
    ".pdf": BookFormat.PDF,
    ".txt": BookFormat.TXT,
    ".text": BookFormat.TXT,
    ".md": BookFormat.MARKDOWN,
    ".markdown": BookFormat.MARKDOWN,
    ".html": BookFormat.HTML,
    ".htm": BookFormat.HTML,
    ".xhtml": BookFormat.HTML,
    ".cbz": BookFormat.CBZ,
}
PAGE_TARGET = 2000


def detect_format(path: Path) -> BookFormat:
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        kind = f"'{path.suffix}' files" if path.suffix else "files without an extension"
        raise BookError(
            BookCode.UNSUPPORTED,
            f"{path.name} cannot be opened: Margin does not read {kind}.",
            hint="Margin reads EPUB, PDF, comics (.cbz), plain text (.txt), Markdown (.md) and "
            "HTML books.",
        )
    return fmt


def check_file(path: Path, limits: Limits = DEFAULT_LIMITS) -> int:
    """Check a book file before anything reads it: it exists, is a regular file (not a
    folder, a pipe or a device, which could hang or never end), is readable, is not empty
    and is within the size limit for its format. Returns its size."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise BookError(
            BookCode.NOT_FOUND, f"{path} does not exist.", hint="Check the file name and folder."
        ) from None
    except OSError as exc:
        raise BookError(
            BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
        ) from None
    if S_ISDIR(stat.st_mode):
        raise BookError(BookCode.UNSUPPORTED, f"{path.name} is a folder, not a book file.")
    if not S_ISREG(stat.st_mode):
        raise BookError(
            BookCode.UNSUPPORTED,
            f"{path.name} is not a regular file (it is a pipe, a device or a socket), "
            "so it cannot be a book.",
            hint="Choose the book file itself.",
        )
    if not os.access(path, os.R_OK):
        raise BookError(
            BookCode.UNREADABLE,
            f"{path.name} could not be read: you do not have permission to open it.",
            hint="Check the file's permissions.",
        )
    if stat.st_size == 0:
        raise BookError(
            BookCode.EMPTY,
            f"{path.name} is empty (0 bytes).",
            hint="Download or copy the file again.",
        )
    cap = limits.max_file_bytes
    if SUFFIXES.get(path.suffix.lower()) in TEXT_FORMATS:
        cap = min(cap, limits.max_text_file_bytes)
    if stat.st_size > cap:
        raise too_large(path, f"it is {human_size(stat.st_size)}, more than {human_size(cap)}")
    return stat.st_size


_check_file = check_file
TEXT_FORMATS = frozenset([BookFormat.TXT, BookFormat.MARKDOWN, BookFormat.HTML])


def _read(path: Path, cap: int) -> bytes:
    """At most ``cap`` bytes, refusing a file that grew past it since it was checked."""
    try:
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise BookError(
            BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
        ) from None
    if len(data) > cap:
        raise too_large(path, f"it is more than {human_size(cap)}")
    return data


def parse_book(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
    password: str | None = None,
) -> ParsedBook:
    """Parse any supported file. The result always has its pages, and toc entries point at
    1-based pages. Raises ``BookError`` with a sentence naming the file and the reason.
    ``password`` opens a protected PDF (kept in memory only)."""
    with gc_paused():  # (core.books.memory: a parsed book's objects form no cycles)
        return _parse_book(Path(path), progress, cancel, limits, password)


def _parse_book(
    path: Path,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    password: str | None,
) -> ParsedBook:
    path = Path(path)
    fmt = detect_format(path)
    _check_file(path, limits)
    if cancel is not None:
        cancel.check()
    if fmt is BookFormat.PDF:
        from core.books.pdf import parse_pdf

        return parse_pdf(path, progress=progress, cancel=cancel, limits=limits, password=password)
    if fmt is BookFormat.CBZ:
        from core.books.comics import parse_cbz

        return parse_cbz(path, progress=progress, limits=limits)
    if fmt is BookFormat.EPUB:
        from core.books.epub import parse_epub_cut

        book, cuts = parse_epub_cut(
            path,
            progress=lambda f, m: progress(f * 0.9, m),
            cancel=cancel,
            limits=limits,
            target=PAGE_TARGET,
        )
        if book.pages and not book.chapters:
            return book  # a picture book (core/books/comics.py): its pages are its pictures
    else:
        cuts = {}
        from core.books import text

        data = _read(path, min(limits.max_file_bytes, limits.max_text_file_bytes))
        parser = {BookFormat.TXT: text.parse_text, BookFormat.MARKDOWN: text.parse_markdown}.get(
            fmt, text.parse_html
        )
        progress(0.3, "Reading the text")
        book = parser(path, data, limits=limits)
    if cancel is not None:
        cancel.check()
    progress(0.9, "Cutting pages")
    marks = dict(
        line.split("\t", 1) for line in book.extra.get("page_list", "").splitlines() if "\t" in line
    )
    cut = paginate_blocks(book.chapters, target=PAGE_TARGET, keep=frozenset(marks), cuts=cuts)
    pages = printed_labels(cut.pages, marks) if marks else cut.pages
    if not pages:
        raise BookError(BookCode.EMPTY, f"{path.name} has no text in it.")
    if len(pages) > limits.max_pages:
        raise too_large(path, f"it makes {len(pages):,} pages, more than {limits.max_pages:,}")
    toc = tuple(
        TocItem(
            item.title,
            item.level,
            page=cut.page_of(item.chapter, getattr(item, "block", None)),
            chapter=item.chapter,
        )
        for item in book.toc
    )
    progress(1.0, "Read")
    return ParsedBook(
        format=book.format,
        title=book.title,
        author=book.author,
        language=book.language,
        chapters=book.chapters,
        pages=tuple(pages),
        toc=toc,
        extra=book.extra,
    )
