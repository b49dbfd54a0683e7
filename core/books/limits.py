"""Limits that keep a hostile or broken file from exhausting memory or time.

Every limit gives a ``BookError(TOO_LARGE)`` that names the file and the limit, so a reader
knows the file is the problem rather than Margin.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import BookCode, BookError

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How large a book Margin reads (files, pages, paragraphs, archives)."""

    max_file_bytes: int = 512 * MiB
    max_pages: int = 10_000
    max_uncompressed_bytes: int = 1024 * MiB
    max_compression_ratio: int = 200
    max_paragraph_chars: int = 200_000
    max_entry_count: int = 10_000
    max_text_file_bytes: int = 32 * MiB
    """Plain text, Markdown and HTML: far above any real book (the longest novels are a
    few MB), far below what would take gigabytes to parse."""
    max_pdf_worker_bytes: int = 448 * MiB
    """Address space of a PDF text worker process."""
    epub_worker: bool = True
    """Whether a big EPUB's parse may share its documents with a second process
    (core.books.epubworker, when that pays). ``margin import`` of one book turns it off: the
    command ends before a worker started for it pays for its own start (16 MiB EPUB: 1.04x
    the wall time, 1.08x the CPU with it)."""


DEFAULT_LIMITS = Limits()


def too_large(path: Path, what: str, hint: str = "") -> BookError:
    return BookError(
        BookCode.TOO_LARGE,
        f"{path.name} cannot be opened: {what}.",
        hint=hint or "Margin refuses files this large to keep your computer responsive.",
    )


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"
