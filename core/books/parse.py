"""One entry point from a file to a ``ParsedBook`` with its pages and table of contents."""

from __future__ import annotations

import os
from pathlib import Path

from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.model import BookFormat, ParsedBook, TocItem
from core.books.pages import paginate_blocks
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
}
PAGE_TARGET = 2000


def detect_format(path: Path) -> BookFormat:
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        kind = f"'{path.suffix}' files" if path.suffix else "files without an extension"
        raise BookError(
            BookCode.UNSUPPORTED,
            f"{path.name} cannot be opened: Margin does not read {kind}.",
            hint="Margin reads EPUB, PDF, plain text (.txt), Markdown (.md) and HTML books.",
        )
    return fmt


def _check_file(path: Path, limits: Limits) -> int:
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
    if path.is_dir():
        raise BookError(BookCode.UNSUPPORTED, f"{path.name} is a folder, not a book file.")
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
    if stat.st_size > limits.max_file_bytes:
        raise too_large(
            path, f"it is {human_size(stat.st_size)}, more than {human_size(limits.max_file_bytes)}"
        )
    return stat.st_size


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BookError(
            BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
        ) from None


def parse_book(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedBook:
    """Parse any supported file. The result always has its pages, and toc entries point at
    1-based pages. Raises ``BookError`` with a sentence naming the file and the reason."""
    path = Path(path)
    fmt = detect_format(path)
    _check_file(path, limits)
    if cancel is not None:
        cancel.check()
    if fmt is BookFormat.PDF:
        from core.books.pdf import parse_pdf

        return parse_pdf(path, progress=progress, cancel=cancel, limits=limits)
    if fmt is BookFormat.EPUB:
        from core.books.epub import parse_epub

        book = parse_epub(
            path, progress=lambda f, m: progress(f * 0.9, m), cancel=cancel, limits=limits
        )
    else:
        from core.books import text

        data = _read(path)
        parser = {BookFormat.TXT: text.parse_text, BookFormat.MARKDOWN: text.parse_markdown}.get(
            fmt, text.parse_html
        )
        progress(0.3, "Reading the text")
        book = parser(path, data, limits=limits)
    if cancel is not None:
        cancel.check()
    progress(0.9, "Cutting pages")
    cut = paginate_blocks(book.chapters, target=PAGE_TARGET)
    pages = cut.pages
    if not pages:
        raise BookError(BookCode.EMPTY, f"{path.name} has no text in it.")
    if len(pages) > limits.max_pages:
        raise too_large(path, f"it makes {len(pages):,} pages, more than {limits.max_pages:,}")
    toc = tuple(
        TocItem(
            item.title,
            item.level,
            page=cut.page_of(item.chapter, item.block),
            chapter=item.chapter,
            block=item.block,
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
