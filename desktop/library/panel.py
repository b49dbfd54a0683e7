"""The library panel the main window shows: now the cover grid of ``desktop.library.view``.

Kept so ``from desktop.library.panel import LibraryPanel`` goes on working."""

from __future__ import annotations

from desktop.library.view import BOOK_ID, EMPTY_TEXT, LibraryView

LibraryPanel = LibraryView

__all__ = ["BOOK_ID", "EMPTY_TEXT", "LibraryPanel", "LibraryView"]
