"""The main window. The one place that wires the library, the reader and the chat pane.

The book is the centre: the window shows either the library (the cover grid) or the reading
view, where the reader takes the width and the chat pane sits beside it (resizable, and
hidden with Ctrl+Shift+L). Contents, Find and Highlights share one side panel shown with
Ctrl+T; F11 is full screen and Ctrl+Shift+F a focus mode with nothing but the page (Esc leaves
it). All of it is remembered in window.ini.
"""

from __future__ import annotations

import importlib
import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.app import Margin
from core.books.parse import SUFFIXES
from core.errors import MarginError
from core.store.library import BookInfo
from desktop.import_controller import ImportController
from desktop.library_panel import LibraryPanel
from desktop.reader.reader import Reader
from desktop.reader.typography import TypographyStore
from desktop.requests import OpenPageRequest
from desktop.tasks import TaskKeeper, run_blocking

log = logging.getLogger("margin.window")
BOOK_FILTER = (
    "Books (*.epub *.pdf *.txt *.text *.md *.markdown *.html *.htm *.xhtml);;All files (*)"
)
WELCOME = "Welcome to Margin.md"
CHAT_SHARE = 0.3  # of the window's width, within the bounds below, when the chat first shows
CHAT_MIN, CHAT_MAX = 280, 440


def default_chat_width(window_width: int) -> int:
    return max(CHAT_MIN, min(CHAT_MAX, round(window_width * CHAT_SHARE)))


def _bool(value: object, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


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
        self.typography = TypographyStore(self.paths, self.reader.settings)
        self.reader.set_typography(self.typography.for_book(None))
        self._reading_settings: Any = None
        self._focus_mode = False
        self._before_focus: dict[str, bool] = {}
        # the reading view: the reader takes the width, the chat pane beside it
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.reader)
        self.splitter.addWidget(self.chat)
        self.splitter.setCollapsible(0, False)
        self.splitter.setCollapsible(1, True)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        chat_width = default_chat_width(self.width())
        self.splitter.setSizes([self.width() - chat_width, chat_width])
        self._chat_width = chat_width
        # the library view: the cover grid, with a way back to the open book
        self.library_view = QWidget()
        self.back_to_book = QToolButton()
        self.back_to_book.setAccessibleName("Back to the book")
        self.back_to_book.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.back_to_book.clicked.connect(self.show_reader)
        self.back_to_book.hide()
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.addWidget(self.back_to_book)
        top.addStretch(1)
        lv = QVBoxLayout(self.library_view)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(0)
        lv.addLayout(top)
        lv.addWidget(self.library_panel, 1)
        self.views = QStackedWidget()
        self.views.addWidget(self.library_view)
        self.views.addWidget(self.splitter)
        self.views.currentChanged.connect(self._view_changed)
        self.setCentralWidget(self.views)
        self.reader.side.hide()  # Contents, Find, Highlights: Ctrl+T
        self._reader_buttons()
        self._wire()
        self._menus()
        if self.typography.problems:  # a bad [reader] value: say so, the default is in use
            self.statusBar().showMessage(self.typography.problems[0], 20000)
        else:
            self.statusBar().showMessage("Ready", 2000)
        self.refresh_library()
        self._preload_agent()
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
        self.importer.started.connect(self.show_library)  # its progress and errors show there
        self.importer.progressed.connect(lp.import_progress)
        self.importer.finished.connect(lp.import_finished)
        self.importer.failed.connect(lambda text: lp.show_errors([text]))
        self.importer.imported.connect(lambda _result: self.refresh_library())
        self.reader.requestAsk.connect(self.requestAsk)
        self.reader.pageChanged.connect(self._page_changed)
        self.reader.fontSizeChanged.connect(self._font_size_changed)
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
        self.addAction(action)  # its keys work in focus mode too, with the menu bar hidden
        if name:
            setattr(self, f"action_{name}", action)
        return action

    def _menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&Open…", self.choose_files, QKeySequence.StandardKey.Open, "open")
        self._action(file, "&Export highlights…", self.export_highlights, None, "export")
        self._action(
            file, "Search the &library…", self.open_library_search, "Ctrl+Alt+F", "library_search"
        )
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
        self._action(view, "&Library / book", self.toggle_library, "Ctrl+B", "toggle_library")
        self._action(view, "Show/hide &contents panel", self.toggle_side, "Ctrl+T", "toggle_side")
        self._action(view, "Show/hide c&hat", self.toggle_chat, "Ctrl+Shift+L", "toggle_chat")
        self._action(view, "&Reading settings…", self.open_reading_settings, None, "reading")
        view.addSeparator()
        self._action(view, "&Full screen", self.toggle_full_screen, "F11", "full_screen")
        self._action(view, "F&ocus mode", self.toggle_focus_mode, "Ctrl+Shift+F", "focus_mode")
        self.action_leave_focus = QAction("Leave focus mode", self)
        self.action_leave_focus.setShortcut(QKeySequence("Esc"))
        self.action_leave_focus.triggered.connect(lambda: self.set_focus_mode(False))
        self.action_leave_focus.setEnabled(False)  # Esc belongs to the widgets otherwise
        self.addAction(self.action_leave_focus)
        book = bar.addMenu("&Book")
        self._action(
            book, "&Find in book…", self.find_in_book, QKeySequence.StandardKey.Find, "find"
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
        splitter = self.settings.value("reading_splitter")
        if isinstance(splitter, QByteArray):
            self._sized = self.splitter.restoreState(splitter)
        theme = self.settings.value("theme")
        if isinstance(theme, str):
            self.set_theme(theme)
        side = self.settings.value("side_splitter")
        if isinstance(side, QByteArray):
            self.reader.split.restoreState(side)
        self.set_side_visible(_bool(self.settings.value("side"), False))
        self.set_chat_visible(_bool(self.settings.value("chat"), True))
        book_id = self.settings.value("book")
        if book_id:
            try:
                self.open_book(int(str(book_id)))
            except (MarginError, ValueError, TypeError):
                pass
        if self.settings.value("view") == "library" or self.reader.book is None:
            self.show_library()
        if _bool(self.settings.value("focus"), False):
            self.set_focus_mode(True)
        if _bool(self.settings.value("full_screen"), False):
            self.set_full_screen(True)

    theme = "system"

    def _preload_agent(self) -> None:
        """Import the agent's modules (about 70 ms of CPU) on a thread once the window is up,
        so opening the first book — which shows its conversations — does not pay for it,
        start-up does not either, and the window keeps painting meanwhile (the interpreter
        hands the UI thread its turn every few milliseconds)."""

        def load() -> None:
            try:
                importlib.import_module("core.agent.service")
            except Exception:  # only speed is lost: the first book imports it then
                log.exception("preloading the agent's modules failed")

        QTimer.singleShot(
            400, lambda: threading.Thread(target=load, name="preload", daemon=True).start()
        )

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
        self.settings.setValue("reading_splitter", self.splitter.saveState())
        self.settings.setValue("view", "library" if self.library_shown() else "reader")
        self.settings.setValue("side", self._side_wanted())
        self.settings.setValue("side_splitter", self.reader.split.saveState())
        self.settings.setValue("chat", self._chat_wanted())
        self.settings.setValue("focus", self._focus_mode)
        self.settings.setValue("full_screen", self.isFullScreen())
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
                self.views.setCurrentWidget(self.splitter)  # laid out at its real size
                self.reader.typography = self.typography.for_book(book_id)
                self.reader.font_size = self.reader.typography.font_size
                self.reader.open_book(book, page)
            elif page is not None:
                self.reader.go_to_page(page)
            if highlight_text and page is not None:
                self.reader.go_to_page(page, mark=highlight_text)
        except MarginError as exc:
            self.library_panel.show_errors([str(exc)])
            if self.reader.book is None:
                self.show_library()
            return None
        self.setWindowTitle(f"{book.title} — Margin")
        if book.outdated:
            self.statusBar().showMessage(
                "An older version of Margin read this book: its contents pages may be wrong. "
                "Book › Re-read this book fixes them.",
                20000,
            )
        self.library_panel.select(book.id)
        self.back_to_book.setText(f"← Back to “{book.title}”")
        self.back_to_book.show()
        self.show_reader()
        self.bookOpened.emit(book.id)
        if self._reading_settings is not None:
            self._load_reading_settings()
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
            self.back_to_book.hide()
            self.show_library()
        chat = self.chat
        if hasattr(chat, "answering") and chat.answering(book_id=book_id):

            async def stop_then_delete() -> None:
                # its answers stop first and save what they wrote; then the book goes
                await chat.stop_answers(book_id=book_id)
                self._delete_book(book_id)

            self.tasks.start(stop_then_delete(), key=f"remove:{book_id}")
            return
        self._delete_book(book_id)

    def _delete_book(self, book_id: int) -> None:
        try:
            self.library.delete_book(book_id)
        except MarginError:
            pass  # removed meanwhile (another window, the CLI)
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

    # layout ---------------------------------------------------------------------------------

    def _reader_buttons(self) -> None:
        """Library, Contents, Reading settings and Chat buttons in the reader's toolbar."""
        bar = self.reader.toolbar.layout()
        assert isinstance(bar, QHBoxLayout)

        def button(text: str, name: str, tip: str, slot: Any, checkable: bool = False) -> Any:
            b = QToolButton()
            b.setText(text)
            b.setAccessibleName(name)
            b.setToolTip(tip)
            b.setCheckable(checkable)
            b.setAutoRaise(True)
            (b.toggled if checkable else b.clicked).connect(slot)
            return b

        self.library_button = button("Library", "Library", "Your books (Ctrl+B)", self.show_library)
        self.side_button = button(
            "Contents",
            "Show contents, find and highlights",
            "Contents, Find and Highlights (Ctrl+T)",
            self.set_side_visible,
            True,
        )
        self.reading_button = button(
            "Aa", "Reading settings", "Font, spacing, line length", self.open_reading_settings
        )
        self.chat_button = button(
            "Chat",
            "Show the chat",
            "Show or hide the chat (Ctrl+Shift+L)",
            self.set_chat_visible,
            True,
        )
        self.chat_button.setChecked(True)
        # the View menu's themes colour the whole window: the reader's own page-theme box would
        # only disagree with them, and the toolbar must fit beside the chat at 1024 px
        self.reader.theme_box.hide()
        bar.setSpacing(2)
        bar.insertWidget(0, self.side_button)
        bar.insertWidget(0, self.library_button)
        bar.addWidget(self.reading_button)
        bar.addWidget(self.chat_button)

    def library_shown(self) -> bool:
        return self.views.currentWidget() is self.library_view

    def show_library(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.views.setCurrentWidget(self.library_view)
        self.library_panel.setFocus()

    def show_reader(self) -> None:
        self.views.setCurrentWidget(self.splitter)
        if self.reader.view is not None:
            self.reader.view.setFocus()

    def toggle_library(self) -> None:
        """Ctrl+B: the library, or back to the book."""
        if self.library_shown() and self.reader.book is not None:
            self.show_reader()
        else:
            self.show_library()

    def _side_wanted(self) -> bool:
        return self._before_focus.get("side", self.side_button.isChecked())

    def _chat_wanted(self) -> bool:
        return self._before_focus.get("chat", self.chat_button.isChecked())

    def set_side_visible(self, visible: bool) -> None:
        self.reader.side.setVisible(visible)
        self.side_button.blockSignals(True)
        self.side_button.setChecked(visible)
        self.side_button.blockSignals(False)

    def toggle_side(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(not self.reader.side.isVisibleTo(self.reader))

    def chat_visible(self) -> bool:
        return self.chat.isVisibleTo(self.splitter) and self.splitter.sizes()[1] > 0

    def set_chat_visible(self, visible: bool) -> None:
        sizes = self.splitter.sizes()
        if not visible and sizes[1] > 0:
            self._chat_width = sizes[1]
        self.chat.setVisible(visible)
        if visible and self.splitter.sizes()[1] == 0:
            total = sum(self.splitter.sizes()) or self.width()
            width = self._chat_width or default_chat_width(total)
            self.splitter.setSizes([max(200, total - width), width])
        self.chat_button.blockSignals(True)
        self.chat_button.setChecked(visible)
        self.chat_button.blockSignals(False)

    def toggle_chat(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_chat_visible(not self.chat_visible())

    def find_in_book(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(True)
        self.reader.focus_find()

    def set_full_screen(self, on: bool) -> None:
        if on and not self.isFullScreen():
            self._was_maximized = self.isMaximized()
            self.showFullScreen()
        elif not on and self.isFullScreen():
            if getattr(self, "_was_maximized", False):
                self.showMaximized()
            else:
                self.showNormal()

    def toggle_full_screen(self) -> None:
        self.set_full_screen(not self.isFullScreen())

    def focus_mode(self) -> bool:
        return self._focus_mode

    def set_focus_mode(self, on: bool) -> None:
        """Nothing but the page: no menus, toolbar, side panel, footer, chat or status bar."""
        if on == self._focus_mode:
            return
        if on:
            self.show_reader()
            self._before_focus = {
                "side": self.side_button.isChecked(),
                "chat": self.chat_button.isChecked(),
            }
            for w in (self.menuBar(), self.statusBar(), self.reader.toolbar, self.reader.footer):
                w.hide()
            self.reader.side.hide()
            self.chat.hide()
        else:
            before, self._before_focus = self._before_focus, {}
            for w in (self.menuBar(), self.statusBar(), self.reader.toolbar, self.reader.footer):
                w.show()
            self.set_side_visible(before.get("side", False))
            self.set_chat_visible(before.get("chat", True))
        self._focus_mode = on
        self.action_leave_focus.setEnabled(on)
        if self.reader.view is not None:
            self.reader.view.setFocus()

    def toggle_focus_mode(self) -> None:
        self.set_focus_mode(not self._focus_mode)

    def focus_chat(self) -> None:
        """Ctrl+L: the chat's input, showing the chat first when it is hidden."""
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        if not self.chat_visible():
            self.set_chat_visible(True)
        if hasattr(self.chat, "focus_input"):
            self.chat.focus_input()

    # typography -------------------------------------------------------------------------------

    def _book_id(self) -> int | None:
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

    # Library-wide search (desktop/library_search.py, issue 24) ----------------------------

    def open_library_search(self) -> None:
        """The library-wide search window; a passage chosen there opens at its page."""
        from desktop.library_search import LibrarySearch

        if getattr(self, "library_search", None) is None:
            self.library_search = LibrarySearch(self.app, self)
            self.library_search.requestOpenPage.connect(self.open_page_request)
        self.library_search.show()
        self.library_search.raise_()
        self.library_search.query.setFocus()

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
            copies = await run_blocking(self.app.unlisted_copies)
            if copies:
                await self.offer_recovery(len(copies))
            elif not self.library.list_books() and not self.settings.value("welcomed"):
                self.settings.setValue("welcomed", 1)
                results = await self.importer.import_files([self.welcome_path()])
                self.refresh_library()
                if results and self.reader.book is None:
                    self.open_book(results[0].book.id)
            if hasattr(self.chat, "warm_up"):
                await self.chat.warm_up()

        self.tasks.start(go(), key="startup")

    async def offer_recovery(self, count: int) -> None:
        """The books folder holds copies no book names (the library database was lost or
        replaced): say so, and add them back when the reader agrees."""
        books = "1 book" if count == 1 else f"{count} books"
        answer = QMessageBox.question(
            self,
            "Books found",
            f"Margin found copies of {books} in its books folder that its library does not "
            "list (the library file was probably lost or replaced).\n\n"
            "Add them back to your library? Nothing is deleted either way.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            self.statusBar().showMessage(
                "Book copies kept; 'margin recover-library' adds them back any time.", 8000
            )
            return
        self.statusBar().showMessage(f"Adding back {books}…")
        recovered = await run_blocking(self.app.recover_library)
        self.refresh_library()
        failed = [r for r in recovered if r.error is not None]
        added = len(recovered) - len(failed)
        text = f"Added back {added} of {len(recovered)} books."
        if failed:
            text += " " + "; ".join(f"{r.path.name}: {r.error.message}" for r in failed[:3])
        self.statusBar().showMessage(text, 15000)

    async def shutdown(self) -> None:
        if hasattr(self.chat, "shutdown"):
            await self.chat.shutdown()
        await self.tasks.shutdown()

    # events ---------------------------------------------------------------------------------

    _sized = False

    def _view_changed(self, _index: int) -> None:
        if self._sized or self.views.currentWidget() is not self.splitter:
            return
        # the first time the reading view shows (and nothing was restored): the chat's
        # default width follows the window's width
        self._sized = True
        self.splitter.setGeometry(self.views.contentsRect())  # hidden pages keep old sizes
        total = sum(self.splitter.sizes())
        self._chat_width = default_chat_width(self.width())
        if self.chat.isVisibleTo(self.splitter):
            self.splitter.setSizes([total - self._chat_width, self._chat_width])

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
