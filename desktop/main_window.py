"""The main window. The one place that wires the library, the reader and the chat pane."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
)
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter, QWidget

from core.app import Margin
from core.books.parse import SUFFIXES
from core.errors import MarginError
from core.store.library import BookInfo
from desktop.import_controller import ImportController
from desktop.library_panel import LibraryPanel
from desktop.reader.reader import Reader
from desktop.requests import OpenPageRequest
from desktop.tasks import TaskKeeper, run_blocking

log = logging.getLogger("margin.window")
BOOK_FILTER = (
    "Books (*.epub *.pdf *.txt *.text *.md *.markdown *.html *.htm *.xhtml);;All files (*)"
)
WELCOME = "Welcome to Margin.md"


class MainWindow(QMainWindow):
    requestAsk = Signal(object)  # AskRequest, from the reader to the chat pane
    bookOpened = Signal(int)
    closed = Signal()

    def __init__(self, app: Margin, *, restore: bool = True) -> None:
        super().__init__()
        self.app = app
        self.library = app.library
        self.paths = app.paths
        self.tasks = TaskKeeper()
        self.setWindowTitle("Margin")
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.settings = QSettings(str(self.paths.config / "window.ini"), QSettings.Format.IniFormat)
        self.library_panel = LibraryPanel(self.paths.data)
        self.reader = Reader(self.library)
        self.chat: Any = self._make_chat()
        self.importer = ImportController(self.library, self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.library_panel)
        self.splitter.addWidget(self.reader)
        self.splitter.addWidget(self.chat)
        self.splitter.setCollapsible(0, True)
        self.splitter.setCollapsible(1, False)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([230, 700, 350])
        self.setCentralWidget(self.splitter)
        self._wire()
        self._menus()
        self.statusBar().showMessage("Ready", 2000)
        self.refresh_library()
        if restore:
            self._restore()

    # construction -----------------------------------------------------------------------

    def _make_chat(self) -> QWidget:
        try:
            from desktop.chat.pane import ChatPane
        except ImportError:
            label = QLabel("The chat pane is not available.")
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            return label
        return ChatPane(self.app, self.tasks)

    def _wire(self) -> None:
        lp = self.library_panel
        lp.requestOpen.connect(lambda book_id: self.open_book(book_id))
        lp.requestRemove.connect(self.remove_book)
        lp.requestImport.connect(self.choose_files)
        lp.requestCancelImport.connect(self.importer.cancel)
        self.importer.started.connect(lp.import_started)
        self.importer.progressed.connect(lp.import_progress)
        self.importer.finished.connect(lp.import_finished)
        self.importer.failed.connect(lambda text: lp.show_errors([text]))
        self.importer.imported.connect(lambda _result: self.refresh_library())
        self.reader.requestAsk.connect(self.requestAsk)
        self.reader.pageChanged.connect(self._page_changed)
        chat = self.chat
        if hasattr(chat, "handle_ask"):
            self.requestAsk.connect(chat.handle_ask)
            chat.requestOpenPage.connect(self.open_page_request)
            chat.requestSettings.connect(self.open_settings)
            self.bookOpened.connect(chat.set_book)

    def _action(
        self,
        menu: Any,
        text: str,
        slot: Any,
        shortcut: QKeySequence.StandardKey | str | None = None,
        name: str = "",
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        if name:
            setattr(self, f"action_{name}", action)
        return action

    def _menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&Open…", self.choose_files, QKeySequence.StandardKey.Open, "open")
        self._action(file, "&Export highlights…", self.export_highlights, None, "export")
        file.addSeparator()
        self._action(file, "&Settings…", self.open_settings, "Ctrl+,", "settings")
        file.addSeparator()
        self._action(file, "&Quit", self.close, QKeySequence.StandardKey.Quit, "quit")
        view = bar.addMenu("&View")
        self._action(
            view,
            "&Next page",
            self.reader.next_page,
            QKeySequence.StandardKey.MoveToNextPage,
            "next",
        )
        self._action(
            view,
            "&Previous page",
            self.reader.previous_page,
            QKeySequence.StandardKey.MoveToPreviousPage,
            "previous",
        )
        self._action(view, "Next page (arrow)", self.reader.next_page, "Ctrl+Right")
        self._action(view, "Previous page (arrow)", self.reader.previous_page, "Ctrl+Left")
        self._action(view, "&Go to page…", self.go_to_page_dialog, "Ctrl+G", "goto")
        view.addSeparator()
        self._action(
            view, "Zoom &in", self.reader.zoom_in, QKeySequence.StandardKey.ZoomIn, "zoom_in"
        )
        self._action(
            view, "Zoom &out", self.reader.zoom_out, QKeySequence.StandardKey.ZoomOut, "zoom_out"
        )
        self._action(view, "Fit &width", self.reader.fit_width, "Ctrl+0", "fit")
        view.addSeparator()
        for theme in ("system", "light", "sepia", "dark"):
            self._action(
                view,
                "System theme (follows the desktop)"
                if theme == "system"
                else f"{theme.title()} theme",
                lambda _=False, t=theme: self.set_theme(t),
            )
        view.addSeparator()
        self._action(view, "Show/hide &library", self.toggle_library, "Ctrl+B", "toggle_library")
        book = bar.addMenu("&Book")
        self._action(
            book, "&Find in book…", self.reader.focus_find, QKeySequence.StandardKey.Find, "find"
        )
        self._action(
            book,
            "&Ask about selection",
            lambda: self.reader.ask_about_selection("ask"),
            "Ctrl+Return",
            "ask",
        )
        self._action(
            book, "&Explain selection", lambda: self.reader.ask_about_selection("explain"), "Ctrl+E"
        )
        self._action(
            book,
            "&Highlight selection",
            lambda: self.reader.ask_about_selection("highlight"),
            "Ctrl+H",
        )
        self._action(book, "Focus &chat", self.focus_chat, "Ctrl+L", "focus_chat")
        self._action(book, "&Notes and highlights…", self.open_notes, "Ctrl+Shift+N", "notes")
        self._action(
            book, "Mark &finished", lambda: self.reader.finished_box.toggle(), None, "finished"
        )
        self._action(book, "Re-&read this book", self.reread_current, None, "reread")
        self._action(book, "&Remove from library…", self.remove_current, None, "remove")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Welcome guide", self.open_welcome)
        self._action(
            help_menu,
            "Open &data folder",
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.paths.data))),
        )
        self._action(help_menu, "&About Margin", self.about, None, "about")

    # state ------------------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        splitter = self.settings.value("splitter")
        if isinstance(splitter, QByteArray):
            self.splitter.restoreState(splitter)
        theme = self.settings.value("theme")
        if isinstance(theme, str):
            self.set_theme(theme)
        book_id = self.settings.value("book")
        if book_id:
            try:
                self.open_book(int(str(book_id)))
            except (MarginError, ValueError, TypeError):
                pass

    theme = "system"

    def set_theme(self, name: str) -> None:
        """Colour the whole window (every panel, scrollbars, the page): "system" follows the
        desktop's light or dark scheme."""
        from PySide6.QtWidgets import QApplication

        from desktop.theme import apply_app_theme

        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        self.theme = name
        self.reader.set_theme(apply_app_theme(app, name))

    def save_state(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("splitter", self.splitter.saveState())
        self.settings.setValue("theme", self.theme)
        self.settings.setValue("book", self.reader.book.id if self.reader.book else "")
        self.settings.sync()

    def refresh_library(self) -> None:
        current = self.reader.book.id if self.reader.book else None
        self.library_panel.set_books(self.library.list_books(), current)

    # books --------------------------------------------------------------------------------

    def open_book(
        self, book_id: int, page: int | None = None, highlight_text: str = ""
    ) -> BookInfo | None:
        try:
            book = self.library.get_book(book_id)
            if self.reader.book is None or self.reader.book.id != book_id:
                self.reader.open_book(book, page)
            elif page is not None:
                self.reader.go_to_page(page)
            if highlight_text and page is not None:
                self.reader.go_to_page(page, mark=highlight_text)
        except MarginError as exc:
            self.library_panel.show_errors([str(exc)])
            return None
        self.setWindowTitle(f"{book.title} — Margin")
        if book.outdated:
            self.statusBar().showMessage(
                "An older version of Margin read this book: its contents pages may be wrong. "
                "Book › Re-read this book fixes them.",
                20000,
            )
        self.library_panel.select(book.id)
        self.bookOpened.emit(book.id)
        return book

    def open_page_request(self, request: OpenPageRequest) -> None:
        self.open_book(request.book_id, request.page, request.quote)

    def _page_changed(self, book_id: int, page: int) -> None:
        self.statusBar().showMessage(f"Page {page}", 1500)

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add books", str(Path.home()), BOOK_FILTER)
        if files:
            self.import_files([Path(f) for f in files])

    def import_files(self, paths: list[Path], *, open_first: bool = True) -> None:
        async def go() -> None:
            results = await self.importer.import_files(paths)
            self.refresh_library()
            if results and open_first:
                self.open_book(results[0].book.id)

        self.tasks.start(go(), key="import", replace=False)

    async def import_and_open(self, path: Path, page: int | None = None) -> BookInfo | None:
        """Import ``path`` if needed and open it (``Margin book.epub`` from a file manager)."""
        results = await self.importer.import_files([path])
        self.refresh_library()
        if not results:
            error = self.library_panel.error.text() or f"{path.name} could not be opened."
            raise MarginError("import_failed", error)
        return self.open_book(results[0].book.id, page)

    def remove_book(self, book_id: int) -> None:
        try:
            book = self.library.get_book(book_id)
        except MarginError:
            return
        answer = QMessageBox.question(
            self,
            "Remove book",
            f"Remove “{book.title}” from your library, with its highlights, notes and conversations?\n\nThe original file is not touched.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        if self.reader.book is not None and self.reader.book.id == book_id:
            self.reader.close_book()
            self.bookOpened.emit(0)
            self.setWindowTitle("Margin")
        self.library.delete_book(book_id)
        self.refresh_library()

    def reread_current(self) -> None:
        """Read the open book again with today's readers (off the UI thread), then show it
        at the same page."""
        book = self.reader.book
        if book is None:
            return

        async def go() -> None:
            from core.books.importer import reimport_book

            self.statusBar().showMessage(f"Reading “{book.title}” again…")
            try:
                updated = await run_blocking(reimport_book, self.library, book.id)
            except MarginError as exc:
                self.statusBar().showMessage(str(exc), 10000)
                return
            self.reader.close_book()
            self.open_book(updated.id, updated.page)
            self.statusBar().showMessage(f"“{updated.title}” was read again.", 5000)

        self.tasks.start(go(), key="reread")

    def remove_current(self) -> None:
        if self.reader.book is not None:
            self.remove_book(self.reader.book.id)

    def go_to_page_dialog(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        if self.reader.book is None:
            return
        page, ok = QInputDialog.getInt(
            self, "Go to page", "Page:", self.reader.page, 1, self.reader.book.page_count
        )
        if ok:
            self.reader.go_to_page(page)

    def toggle_library(self) -> None:
        sizes = self.splitter.sizes()
        if sizes[0] > 0:
            self._library_width = sizes[0]
            sizes[1] += sizes[0]
            sizes[0] = 0
        else:
            width = getattr(self, "_library_width", 230)
            sizes[0] = width
            sizes[1] = max(200, sizes[1] - width)
        self.splitter.setSizes(sizes)

    def focus_chat(self) -> None:
        if hasattr(self.chat, "focus_input"):
            self.chat.focus_input()

    def export_highlights(self) -> None:
        from core.export import export_highlights

        book = self.reader.book
        if book is None:
            self.statusBar().showMessage("Open a book first.", 3000)
            return
        name, _ = QFileDialog.getSaveFileName(
            self,
            "Export highlights",
            str(Path.home() / f"{book.title} — highlights.md"),
            "Markdown (*.md)",
        )
        if name:
            export_highlights(self.library, book.id, Path(name))
            self.statusBar().showMessage(f"Highlights saved to {name}", 4000)

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
        try:
            module = importlib.import_module("desktop.notes_panel")
        except ImportError:
            return
        panel = module.NotesPanel(self.library, self)
        panel.setWindowFlag(Qt.WindowType.Window)
        panel.set_book(self.reader.book.id if self.reader.book else None)
        panel.requestOpenPage.connect(self.open_page_request)
        self.reader.highlightsChanged.connect(lambda _id: panel.refresh())
        panel.show()
        self._notes_panel = panel

    def open_welcome(self) -> None:
        for book in self.library.list_books():
            if book.original_path.endswith(WELCOME):
                self.open_book(book.id)
                return
        self.import_files([self.welcome_path()])

    @staticmethod
    def welcome_path() -> Path:
        from desktop.app import resources_dir

        return resources_dir() / "welcome" / WELCOME

    def about(self) -> None:
        from core.version import version_text

        QMessageBox.about(
            self,
            "About Margin",
            version_text().replace("\n", "<br>") + "<br><br>Read a book and talk about it.",
        )

    # background work ----------------------------------------------------------------------

    def start_background_work(self) -> None:
        """After the window is visible: tidy up after a crash, import the welcome guide on
        first run, and warm the model SDK so the first question does not wait for it."""

        async def go() -> None:
            from core.books.importer import recover_incomplete

            await run_blocking(recover_incomplete, self.library)
            if hasattr(self.chat, "recover"):
                await run_blocking(self.chat.recover)
            if not self.library.list_books() and not self.settings.value("welcomed"):
                self.settings.setValue("welcomed", 1)
                results = await self.importer.import_files([self.welcome_path()])
                self.refresh_library()
                if results and self.reader.book is None:
                    self.open_book(results[0].book.id)
            if hasattr(self.chat, "warm_up"):
                await self.chat.warm_up()

        self.tasks.start(go(), key="startup")

    async def shutdown(self) -> None:
        if hasattr(self.chat, "shutdown"):
            await self.chat.shutdown()
        await self.tasks.shutdown()

    # events ---------------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(
            Path(u.toLocalFile()).suffix.lower() in SUFFIXES for u in event.mimeData().urls()
        ):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        files = [f for f in files if f.suffix.lower() in SUFFIXES]
        if files:
            event.acceptProposedAction()
            self.import_files(files)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.importer.cancel()
        self.reader.save_position()
        self.save_state()
        event.accept()
        self.closed.emit()
