"""The window's dialogs and extra panels: reading settings (the look of the book, for one
book or all), Margin's settings, the notes tab, the library-wide search and About. Part of
``MainWindow``, which builds the widgets named below."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMainWindow, QMessageBox

from core.errors import MarginError

if TYPE_CHECKING:  # the type checker sees the window these methods belong to
    from PySide6.QtCore import SignalInstance

    from core.app import Margin
    from core.paths import Paths
    from core.store.library import Library
    from desktop.reader.reader import Reader
    from desktop.reader.typography import TypographyStore
    from desktop.requests import OpenPageRequest

    _Base = QMainWindow
else:
    _Base = object


class WindowPanels(_Base):
    """Part of ``MainWindow``."""

    app: Margin
    paths: Paths
    library: Library
    reader: Reader
    chat: Any
    typography: TypographyStore
    bookOpened: SignalInstance
    _built: bool
    _focus_mode: bool
    _reading_settings: Any
    action_caret: Any

    if TYPE_CHECKING:

        def open_page_request(self, request: OpenPageRequest) -> None: ...

        def set_focus_mode(self, on: bool) -> None: ...

        def show_reader(self) -> None: ...

        def set_side_visible(self, visible: bool) -> None: ...

    def open_library_search(self) -> None:
        """The library-wide search window (desktop/library_search.py); a passage chosen there
        opens at its page."""
        from desktop.library_search import LibrarySearch

        if getattr(self, "library_search", None) is None:
            self.library_search = LibrarySearch(self.app, self)
            self.library_search.requestOpenPage.connect(self.open_page_request)
        self.library_search.show()
        self.library_search.raise_()
        self.library_search.query.setFocus()

    # typography -------------------------------------------------------------------------------

    def _book_id(self) -> int | None:
        if not self._built:
            return None
        return self.reader.book.id if self.reader.book is not None else None

    def open_reading_settings(self) -> None:
        from desktop.reader.reading_settings import ReadingSettings

        if self._reading_settings is None:
            self._reading_settings = ReadingSettings(self)
            self._reading_settings.changed.connect(self.apply_typography)
        self._load_reading_settings()
        self._reading_settings.show()
        self._reading_settings.raise_()

    def _load_reading_settings(self) -> None:
        book_id = self._book_id()
        self._reading_settings.set_values(
            self.typography.for_book(book_id),
            this_book=self.typography.has_override(book_id),
            has_book=book_id is not None,
        )
        problems = self.typography.problems
        self._reading_settings.note.setText("\n".join(problems))
        self._reading_settings.note.setVisible(bool(problems))

    def apply_typography(self, typography: Any, this_book_only: bool = False) -> None:
        """Show the book in ``typography`` now and remember it, for the open book only or as
        the look of every book."""
        book_id = self._book_id()
        try:
            if this_book_only and book_id is not None:
                self.typography.save(typography, book_id)
            else:
                if book_id is not None:
                    self.typography.forget_book(book_id)
                self.typography.save(typography)
        except MarginError as exc:
            self.statusBar().showMessage(str(exc), 6000)
        self.reader.set_typography(typography)
        self.tick_caret(typography.caret_browsing)

    def set_caret_browsing(self, on: bool) -> None:
        """Caret browsing on or off (F7, View › Caret browsing): the view, the menu and the
        reading settings agree, and the choice is kept as the font size is (for the open book
        when it has a look of its own, else for every book)."""
        book_id = self._book_id()
        own = book_id is not None and self.typography.has_override(book_id)
        look = replace(self.typography.for_book(book_id), caret_browsing=on)
        try:
            self.typography.save(look, book_id if own else None)
        except MarginError as exc:
            self.statusBar().showMessage(str(exc), 6000)
        self.reader.set_caret_browsing(on)
        self.tick_caret(on)
        if self._reading_settings is not None:
            self._load_reading_settings()

    def tick_caret(self, on: bool) -> None:
        """The View menu's tick follows caret browsing (setChecked does not trigger it)."""
        self.action_caret.setChecked(on)

    def _font_size_changed(self, size: int) -> None:
        """Zoomed with the keys or buttons: the reader has redrawn, remember the size."""
        book_id = self._book_id()
        own = self.typography.has_override(book_id) and book_id is not None
        look = replace(self.typography.for_book(book_id), font_size=size)
        try:
            self.typography.save(look, book_id if own else None)
        except MarginError as exc:
            self.statusBar().showMessage(str(exc), 6000)
        self.reader.typography = look
        if self._reading_settings is not None:
            self._load_reading_settings()

    def open_settings(self) -> None:
        try:
            module = importlib.import_module("desktop.settings_dialog")
        except ImportError:
            return
        dialog = module.SettingsDialog(self.paths, self)
        if hasattr(self.chat, "settings_changed"):
            dialog.settingsChanged.connect(self.chat.settings_changed)
        dialog.open()
        self._settings_dialog = dialog

    def open_notes(self) -> None:
        """Notes and highlights, as a fourth tab of the side panel (made on first use)."""
        try:
            module = importlib.import_module("desktop.notes_panel")
        except ImportError:
            return
        panel = getattr(self, "_notes_panel", None)
        if panel is None:
            panel = module.NotesPanel(self.library)
            panel.setAccessibleName("Notes and highlights")
            panel.requestOpenPage.connect(self.open_page_request)
            self.reader.highlightsChanged.connect(lambda _id: panel.refresh())
            self.bookOpened.connect(lambda book_id: panel.set_book(book_id or None))
            self.reader.side.addTab(panel, "Notes")
            self._notes_panel = panel
        panel.set_book(self._book_id())
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(True)
        self.reader.side.setCurrentWidget(panel)

    def about(self) -> None:
        from core.version import version_text

        QMessageBox.about(
            self,
            "About Margin",
            version_text().replace("\n", "<br>") + "<br><br>Read a book and talk about it.",
        )
