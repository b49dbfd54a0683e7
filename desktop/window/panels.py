"""The window's dialogs and extra panels: reading settings (the look of the book, for one
book or all), Margin's settings, the notes tab, the library-wide search and About. The window owns
them through ``window.panels``."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from PySide6.QtWidgets import QDialog, QMessageBox

from core.errors import MarginError

if TYPE_CHECKING:
    from desktop.highlights.notes_panel import NotesPanel
    from desktop.library.search import LibrarySearch
    from desktop.reader.reading_settings import ReadingSettings
    from desktop.reader.typography import Typography
    from desktop.window.main_window import MainWindow


class WindowPanels:
    """The window's dialogs and extra panels. The window owns one (``window.panels``)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.reading_settings: ReadingSettings | None = None  # made on first use
        self.library_search: LibrarySearch | None = None
        self.settings_dialog: QDialog | None = None
        self.notes_panel: NotesPanel | None = None

    def open_library_search(self) -> None:
        """The library-wide search window (desktop/library/search.py); a passage chosen there
        opens at its page."""
        from desktop.library.search import LibrarySearch

        if self.library_search is None:
            self.library_search = LibrarySearch(self.window.app, self.window)
            self.library_search.requestOpenPage.connect(self.window.open_page_request)
        self.library_search.show()
        self.library_search.raise_()
        self.library_search.query.setFocus()

    # typography -------------------------------------------------------------------------------

    def book_id(self) -> int | None:
        if not self.window._built:
            return None
        return self.window.reader.book.id if self.window.reader.book is not None else None

    def open_reading_settings(self) -> None:
        from desktop.reader.reading_settings import ReadingSettings

        if self.reading_settings is None:
            self.reading_settings = ReadingSettings(self.window)
            self.reading_settings.changed.connect(self.apply_typography)
        self.load_reading_settings()
        self.reading_settings.present()

    def load_reading_settings(self) -> None:
        dialog = self.reading_settings
        if dialog is None:
            return
        book_id = self.book_id()
        dialog.set_values(
            self.window.typography.for_book(book_id),
            this_book=self.window.typography.has_override(book_id),
            has_book=book_id is not None,
        )
        problems = self.window.typography.problems
        dialog.note.setText("\n".join(problems))
        dialog.note.setVisible(bool(problems))

    def apply_typography(self, typography: Typography, this_book_only: bool = False) -> None:
        """Show the book in ``typography`` now and remember it, for the open book only or as
        the look of every book."""
        book_id = self.book_id()
        try:
            if this_book_only and book_id is not None:
                self.window.typography.save(typography, book_id)
            else:
                if book_id is not None:
                    self.window.typography.forget_book(book_id)
                self.window.typography.save(typography)
        except MarginError as exc:
            self.window.statusBar().showMessage(str(exc), 6000)
        self.window.reader.set_typography(typography)
        self.tick_caret(typography.caret_browsing)

    def set_caret_browsing(self, on: bool) -> None:
        """Caret browsing on or off (F7, View › Caret browsing): the view, the menu and the
        reading settings agree, and the choice is kept as the font size is (for the open book
        when it has a look of its own, else for every book)."""
        book_id = self.book_id()
        own = book_id is not None and self.window.typography.has_override(book_id)
        look = replace(self.window.typography.for_book(book_id), caret_browsing=on)
        try:
            self.window.typography.save(look, book_id if own else None)
        except MarginError as exc:
            self.window.statusBar().showMessage(str(exc), 6000)
        self.window.reader.set_caret_browsing(on)
        self.tick_caret(on)
        if self.reading_settings is not None:
            self.load_reading_settings()

    def tick_caret(self, on: bool) -> None:
        """The View menu's tick follows caret browsing (setChecked does not trigger it)."""
        self.window.action_caret.setChecked(on)

    def font_size_changed(self, size: int) -> None:
        """Zoomed with the keys or buttons: the reader has redrawn, remember the size."""
        book_id = self.book_id()
        own = self.window.typography.has_override(book_id) and book_id is not None
        look = replace(self.window.typography.for_book(book_id), font_size=size)
        try:
            self.window.typography.save(look, book_id if own else None)
        except MarginError as exc:
            self.window.statusBar().showMessage(str(exc), 6000)
        self.window.reader.typography = look
        if self.reading_settings is not None:
            self.load_reading_settings()

    def open_settings(self) -> None:
        try:
            module = importlib.import_module("desktop.window.settings_dialog")
        except ImportError:
            return
        dialog = module.SettingsDialog(self.window.paths, self.window)
        if hasattr(self.window.chat, "settings_changed"):
            dialog.settingsChanged.connect(self.window.chat.settings_changed)
        dialog.open()
        self.settings_dialog = dialog

    def open_notes(self) -> None:
        """Notes and highlights, as a fourth tab of the side panel (made on first use)."""
        try:
            module = importlib.import_module("desktop.highlights.notes_panel")
        except ImportError:
            return
        panel = self.notes_panel
        if panel is None:
            panel = cast("NotesPanel", module.NotesPanel(self.window.library))
            panel.setAccessibleName("Notes and highlights")
            panel.requestOpenPage.connect(self.window.open_page_request)
            from desktop.events import BookClosed, BookOpened, HighlightsChanged

            events = self.window.reader.events
            events.subscribe(HighlightsChanged, lambda _e: panel.refresh())
            events.subscribe(BookOpened, lambda e: panel.set_book(e.book_id or None))
            events.subscribe(BookClosed, lambda e: None if e.reopening else panel.set_book(None))
            self.window.reader.side.addTab(panel, "Notes")
            self.notes_panel = panel
        panel.set_book(self.book_id())
        if self.window.panes.focus_on:
            self.window.panes.set_focus_mode(False)
        self.window.panes.show_reader()
        self.window.panes.set_side_visible(True)
        self.window.reader.side.setCurrentWidget(panel)

    def about(self) -> None:
        from core.version import version_text

        QMessageBox.about(
            self.window,
            "About Margin",
            version_text().replace("\n", "<br>") + "<br><br>Read a book and talk about it.",
        )
