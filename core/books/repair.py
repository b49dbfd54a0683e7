"""Repairing a library in place: its search index and damaged stored text are derived from
the books' own copies, so both are rebuilt with nothing the reader made (notes, highlights,
conversations, positions) touched.

The sqlite3 shell cannot do this (the index reads its text through Margin's own SQL
functions); ``margin repair`` and Book › Repair search index run ``repair_library``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from core.errors import MarginError
from core.store.library import BookInfo, Library

log = logging.getLogger(__name__)


@dataclass
class RepairReport:
    checked: int = 0  # books whose stored text was checked
    index_was_damaged: bool = False
    reread: list[BookInfo] = field(default_factory=list)  # damaged text read again from copies
    failed: list[tuple[BookInfo, MarginError]] = field(default_factory=list)
    index_complete: bool = True  # False: some book's stored text is still damaged

    def summary(self) -> str:
        """One or two sentences for people."""
        parts = [
            "The search index was damaged and has been rebuilt."
            if self.index_was_damaged
            else "The search index has been rebuilt."
        ]
        if not self.index_complete:
            parts = [
                "The search index could not be rebuilt: some stored book text is damaged. "
                "Run 'margin repair --all' to read those books again from their copies."
            ]
        if self.reread:
            names = ", ".join(f"“{b.title}”" for b in self.reread)
            parts.append(f"Damaged stored text was read again from the copy of {names}.")
        if self.failed:
            names = ", ".join(f"“{b.title}” ({e.message})" for b, e in self.failed)
            parts.append(f"Could not repair {names}.")
        parts.append("Notes, highlights and conversations are kept.")
        return " ".join(parts)


def repair_library(
    library: Library,
    book_ids: list[int] | None = None,
    *,
    progress: Callable[[int, int, BookInfo], None] = lambda done, total, book: None,
) -> RepairReport:
    """Check the stored text of ``book_ids`` (every book when None): a book whose text no
    longer unpacks is read again from its copy; then the search index is rebuilt. Blocking:
    run it off the UI thread."""
    from core.books.importer import reimport_book

    report = RepairReport()
    books = (
        library.list_books()
        if book_ids is None
        else [library.get_book(book_id) for book_id in book_ids]
    )
    report.index_was_damaged = library.index_damaged()
    if report.index_was_damaged:
        library.repair_index()  # first, so re-reading a book can take its old entries out
    for i, book in enumerate(books):
        progress(i, len(books), book)
        report.checked += 1
        if not library.damaged_text(book.id):
            continue
        try:
            report.reread.append(reimport_book(library, book.id))
        except MarginError as exc:
            log.warning("could not read book %d again", book.id, exc_info=True)
            report.failed.append((book, exc))
    report.index_complete = library.repair_index()
    log.info(
        "repaired the library: %d books checked, index damaged: %s, %d read again, %d failed",
        report.checked,
        report.index_was_damaged,
        len(report.reread),
        len(report.failed),
    )
    return report
