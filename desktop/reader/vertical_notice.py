"""Say once per book that a vertically written book is shown in horizontal lines (issue 45,
item 3): Qt's text layout has no vertical writing, so the reader is told plainly rather than
left to wonder why the page does not look like the printed book."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from core.books.progression import VERTICAL_NOTICE, vertical_writing
from core.store.library import BookInfo


def vertical_notice(ini: QSettings, book: BookInfo) -> str:
    """The sentence to show for ``book`` the first time it is opened, "" otherwise (and for
    every book not written vertically). Remembered by the book's file hash in ``ini``; only\n    the book's style sheets are read (a few ms)."""
    key = f"told_vertical/{book.sha256}"
    if not book.sha256 or ini.value(key):
        return ""
    if not vertical_writing(Path(book.file_path) if book.file_path else None, book.format):
        return ""
    ini.setValue(key, 1)
    return VERTICAL_NOTICE
