"""The library panel the main window shows: now the cover grid of ``desktop.library_view``.

Kept so ``from desktop.library_panel import LibraryPanel`` goes on working."""

from __future__ import annotations

from desktop.library_view import BOOK_ID, EMPTY_TEXT, LibraryView

LibraryPanel = LibraryView

__all__ = ["BOOK_ID", "EMPTY_TEXT", "LibraryPanel", "LibraryView"]
