"""The main window. The one place that wires the library, the reader and the chat pane.

The book is the centre: the window shows either the library (the cover grid) or the reading
view, where the reader takes the width and the chat pane sits beside it (resizable, and
hidden with Ctrl+Shift+L). Contents, Find and Highlights share one side panel shown with
Ctrl+T; F11 is full screen and Ctrl+Shift+F a focus mode with nothing but the page (Esc leaves
it). All of it is remembered in window.ini.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.labels import display_title
from desktop.accessibility import order_tabs
from desktop.library.import_controller import ImportController
from desktop.library.panel import LibraryPanel
from desktop.tasks import TaskKeeper, drain
from desktop.window.books import BookActions
from desktop.window.built_on_use import BuiltOnUse
from desktop.window.layout import WindowLayout, default_chat_width
from desktop.window.menus import build_menus
from desktop.window.panels import WindowPanels
from desktop.window.preferences import Preferences, WindowState
from desktop.window.preload import preload_agent

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

    from core.app import Margin
    from core.paths import Paths
    from core.store.book_info import BookInfo
    from core.store.library import Library
    from desktop.chat.pane import ChatPane
    from desktop.highlights.threads_panel import Threads
    from desktop.readaloud.actions import ReadAloudActions
    from desktop.reader.reader import Reader
    from desktop.reader.typography import TypographyStore
    from desktop.requests import OpenPageRequest

log = logging.getLogger("margin.window")


def _vertical_notice(ini: QSettings, book: BookInfo) -> str:
    # (its module and core.books.progression: when a book opens, not before the first paint)
    from desktop.reader.vertical_notice import vertical_notice

    return vertical_notice(ini, book)


__all__ = ["MainWindow", "default_chat_width"]


class MainWindow(QMainWindow):
    """The window. It owns its controllers (``panes``: what shows and how; ``books``: import,
    remove, re-read, start-up work; ``panels``: dialogs and extra panels), the menus
    (``menus``) and what it remembers (``preferences``)."""

    action_leave_focus: QAction
    action_caret: QAction
    threads: Threads  # with the reading view
    reader: BuiltOnUse[Reader] = BuiltOnUse()
    chat: BuiltOnUse[ChatPane | QLabel] = BuiltOnUse()
    splitter: BuiltOnUse[QSplitter] = BuiltOnUse()
    typography: BuiltOnUse[TypographyStore] = BuiltOnUse()
    library_button: BuiltOnUse[QToolButton] = BuiltOnUse()
    side_button: BuiltOnUse[QToolButton] = BuiltOnUse()
    reading_button: BuiltOnUse[QToolButton] = BuiltOnUse()
    chat_button: BuiltOnUse[QToolButton] = BuiltOnUse()

    requestAsk = Signal(object)  # AskRequest, from the reader to the chat pane
    libraryListed = Signal()  # the library panel shows the books (listed on a worker)
    closed = Signal()
    read_aloud: ReadAloudActions  # Read aloud's menu, button and keys (desktop.readaloud)

    def __init__(
        self,
        app: Margin | None,
        *,
        restore: bool = True,
        paths: Paths | None = None,
        shelf: list[BookInfo] | None = None,
    ) -> None:
        """The window of ``app``; or, at start-up, of the library in ``paths`` not opened
        yet, showing ``shelf`` (its books, read without the library's code): the window is
        painted first, then ``attach`` gives it the library."""
        super().__init__()
        self._built = False
        self._parts: dict[str, object] = {}  # the reading view's parts, once built
        self._app = app
        self._shelf = shelf
        if app is not None:
            paths = app.paths
        assert paths is not None, "a window needs the library or its folder"
        self.paths = paths
        self.tasks = TaskKeeper()
        self.setWindowTitle("Margin")
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.preferences = Preferences(self.paths)
        self.library_panel = LibraryPanel(self.paths.data)
        self.importer = ImportController(app.library if app is not None else None, self)
        self.panes = WindowLayout(self)  # what shows: library or book, panels, focus mode
        self.books = BookActions(self)  # import, remove, re-read, start-up work
        self.panels = WindowPanels(self)  # reading settings, settings, notes, search, about
        self._state: WindowState | None = None  # what the reading view restores when built
        self._book_to_open: int | None = None
        # the library view: the cover grid, with a way back to the open book
        self.library_view = QWidget()
        self.back_to_book = QToolButton()
        self.back_to_book.setAccessibleName("Back to the book")
        self.back_to_book.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.back_to_book.clicked.connect(self.panes.show_reader)
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
        # the first frame while a restored book waits for the reader (built after it)
        self.opening = QWidget()
        self.views.addWidget(self.opening)
        self.views.currentChanged.connect(self.panes.view_changed)
        self.setCentralWidget(self.views)
        self._wire()
        build_menus(self)
        from desktop.sources.actions import install as install_sources

        install_sources(self)  # the Sync menu (KOReader, WebDAV, calibre, OPDS)
        self.statusBar().showMessage("Ready", 2000)
        self.books.refresh_library()
        if app is not None:  # (else once attached: not before the first paint)
            preload_agent()
        if restore:
            self._restore()

    # the library ------------------------------------------------------------------------

    @property
    def app(self) -> Margin:
        if self._app is None:  # asked for before ``attach``: opened here, at once (never
            if self._closing:  # for a closed window: models bind to the library last opened)
                raise RuntimeError("the window was closed before its library was opened")
            from core.app import Margin

            log.info("the library was needed before the window attached it")
            margin = Margin.open(self.paths)
            margin.db.close()  # this thread's connection: the window's threads open their own
            self.attach(margin)
        assert self._app is not None
        return self._app

    @property
    def library(self) -> Library:
        return self.app.library

    def attached(self) -> bool:
        """Whether the window has its library (``attach``) yet."""
        return self._app is not None

    def attach(self, app: Margin) -> None:
        """The library of a window built before it was open (at start-up, once the window
        is painted)."""
        self._app = app
        self.importer.library = app.library
        preload_agent()

    # construction -----------------------------------------------------------------------

    def reading_view_built(self) -> bool:
        return self._built

    def finish_building(self) -> None:
        """Build the reading view (the reader, the chat pane beside it, their buttons and
        wiring), restore its state and open the book the window last showed. The window
        calls it on a loop turn after its first paint; anything that needs the reader
        earlier gets it built here, synchronously."""
        if self._built:
            return
        self._built = True
        from desktop.reader.reader import Reader
        from desktop.reader.typography import TypographyStore
        from desktop.window.menus import add_reader_buttons

        self.reader = Reader(self.library)
        self.chat = self._make_chat()
        self.typography = TypographyStore(self.paths, self.reader.settings)
        self.reader.set_typography(self.typography.for_book(None))
        if self._page_theme:
            self.reader.set_theme(self._page_theme)
        # the reading view: the reader takes the width, the chat pane beside it
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.reader)
        self.splitter.addWidget(self.chat)
        self.splitter.setCollapsible(0, False)
        self.splitter.setCollapsible(1, True)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setSizes([self.width() - self.panes.chat_width, self.panes.chat_width])
        self.reader.side.hide()  # Contents, Find, Highlights: Ctrl+T
        add_reader_buttons(self)
        from desktop.companions import install as install_companions

        install_companions(self)  # X-Ray and the story so far: side tabs, "Who is this?"
        from desktop.readaloud import install as install_read_aloud

        install_read_aloud(self)  # the Read aloud menu, button and keys
        self._wire_reading_view()
        self.panels.tick_caret(self.reader.typography.caret_browsing)
        from desktop.runtime import gc_policy  # collections fall when the reader is not looking

        gc_policy.install(busy=lambda: bool(getattr(self.chat, "live", None)))
        if self.typography.problems:  # a bad [reader] value: say so, the default is in use
            self.statusBar().showMessage(self.typography.problems[0], 20000)
        state, self._state = self._state, None
        if state is not None:
            self._restore_reading_view(state)
        on_opening = self.views.currentWidget() is self.opening
        self.views.insertWidget(1, self.splitter)
        if on_opening:
            self.views.setCurrentWidget(self.splitter)
        self.views.removeWidget(self.opening)
        self.opening.deleteLater()
        book, self._book_to_open = self._book_to_open, None
        if book is None:
            return
        try:
            opened = self.open_book(book)
        except MarginError:
            opened = None
        if opened is None or (state is not None and state.view == "library"):
            self.panes.show_library()
        elif state is not None and state.focus:
            self.panes.set_focus_mode(True)

    def finish_building_if_open(self) -> None:
        """``finish_building``, unless the window was closed meanwhile (a timer calls it)."""
        if not self._closing:
            self.finish_building()

    def _make_chat(self) -> ChatPane | QLabel:
        try:
            from desktop.chat.pane import ChatPane
        except ImportError:
            label = QLabel("The chat pane is not available.")
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            return label
        return ChatPane(self.app, self.tasks, self.reader.events)

    def _wire(self) -> None:
        lp = self.library_panel
        lp.set_sort(self.preferences.library_sort())  # as the reader left it
        lp.sort.currentIndexChanged.connect(
            lambda _row: self.preferences.set_library_sort(str(lp.sort.currentData()))
        )
        lp.requestOpen.connect(lambda book_id: self.open_book(book_id))
        lp.requestRemove.connect(self.books.remove_book)
        lp.requestImport.connect(self.books.choose_files)
        lp.requestCancelImport.connect(self.importer.cancel)
        self.importer.started.connect(lp.import_started)
        self.importer.started.connect(self.panes.show_library)  # its progress and errors show there
        self.importer.progressed.connect(lp.import_progress)
        self.importer.finished.connect(lp.import_finished)
        self.importer.failed.connect(lambda text: lp.show_errors([text]))
        self.importer.imported.connect(lambda _result: self.books.refresh_library())

    def _wire_reading_view(self) -> None:
        from desktop.events import BookOpened, PageShown  # (their dataclasses: after the paint)

        self.reader.requestAsk.connect(self.requestAsk)
        self.reader.events.subscribe(PageShown, lambda e: self._page_changed(e.book_id, e.page))
        self.reader.fontSizeChanged.connect(self.panels.font_size_changed)
        self.reader.caretBrowsingChanged.connect(self.panels.set_caret_browsing)
        chat = self.chat
        if not isinstance(chat, QLabel):  # the chat pane, not the label standing in for it
            # text recognised on a scanned PDF: show it read anew
            chat.pictures.recognised.connect(self._text_recognised)
            self.requestAsk.connect(chat.handle_ask)
            chat.requestOpenPage.connect(self.open_page_request)
            chat.requestSettings.connect(self.panels.open_settings)
        from desktop.highlights.threads_panel import install_threads

        self.threads = install_threads(
            self
        )  # threads: the side panel tab, margin marks, the chat's thread
        # (a new page widget): subscribed after every module, so it runs last
        self.reader.events.subscribe(BookOpened, lambda _e: order_tabs(self))

    # state ------------------------------------------------------------------------------

    def _restore(self) -> None:
        """The window's place and theme now; the reading view's state (and the book last
        shown) once it is built."""
        state = self.preferences.window()
        if state.geometry is not None:
            self.restoreGeometry(state.geometry)
        self.set_theme(state.theme)
        if self._built:
            self._restore_reading_view(state)
            if state.book is not None:
                try:
                    self.open_book(state.book)
                except MarginError:
                    pass
            if state.view == "library" or self.reader.book is None:
                self.panes.show_library()
            if state.focus:
                self.panes.set_focus_mode(True)
        else:
            self._state = state
            if state.book is not None and state.view != "library":
                self._book_to_open = state.book
                self.views.setCurrentWidget(self.opening)
            elif state.book is not None:
                self._book_to_open = state.book  # opened behind the library
        if state.full_screen:
            self.panes.set_full_screen(True)

    def _restore_reading_view(self, state: WindowState) -> None:
        if state.reading_splitter is not None:
            self.panes.sized = self.splitter.restoreState(state.reading_splitter)
        if state.side_splitter is not None:
            self.reader.split.restoreState(state.side_splitter)
        self.panes.set_side_visible(state.side)
        self.panes.set_chat_visible(state.chat)

    theme = "system"
    _page_theme = ""  # the theme applied (what "system" resolved to)

    def set_theme(self, name: str) -> None:
        """Colour the whole window (every panel, scrollbars, the page): "system" follows the
        desktop's light or dark scheme."""
        from PySide6.QtWidgets import QApplication

        from desktop.theme import apply_app_theme

        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        self.theme = name
        self._page_theme = apply_app_theme(app, name)
        if self._built:
            self.reader.set_theme(self._page_theme)

    def save_state(self) -> None:
        if not self._built:  # closed before the reading view was built: it keeps its state
            kept = self._state or WindowState()
            self.preferences.save_window(
                replace(
                    kept,
                    geometry=self.saveGeometry(),
                    view=kept.view if self._book_to_open is not None else "library",
                    full_screen=self.isFullScreen(),
                    theme=self.theme,
                    book=self._book_to_open,
                )
            )
            return
        self.preferences.save_window(
            WindowState(
                geometry=self.saveGeometry(),
                reading_splitter=self.splitter.saveState(),
                side_splitter=self.reader.split.saveState(),
                view="library" if self.panes.library_shown() else "reader",
                side=self.panes.side_wanted(),
                chat=self.panes.chat_wanted(),
                focus=self.panes.focus_on,
                full_screen=self.isFullScreen(),
                theme=self.theme,
                book=self.reader.book.id if self.reader.book else None,
            )
        )

    # books --------------------------------------------------------------------------------

    def open_book(
        self, book_id: int, page: int | None = None, highlight_text: str = "", *, near: int = -1
    ) -> BookInfo | None:
        try:
            book = self.library.get_book(book_id)
            if self.reader.book is None or self.reader.book.id != book_id:
                self.views.setCurrentWidget(self.splitter)  # laid out at its real size
                self.reader.typography = self.typography.for_book(book_id)
                self.reader.font_size = self.reader.typography.font_size
                self.reader.open_book(book, page)
                if self.importer.prepare_opened(book_id):  # counted once it is drawn
                    self.tasks.start(self.books.prepare_when_drawn(), key="prepare")
            elif page is not None:
                self.reader.go_to_page(page)
            if highlight_text and page is not None:
                self.reader.go_to_page(page, mark=highlight_text, near=max(0, near))
        except MarginError as exc:
            if exc.code in ("password", "wrong_password"):  # a protected PDF: ask, then open
                from desktop.reader.password_dialog import open_after_password

                self.tasks.start(open_after_password(self, book_id, page, exc.code))
                return None
            self.library_panel.show_errors([str(exc)])
            if self.reader.book is None:
                self.panes.show_library()
            return None
        self.setWindowTitle(f"{display_title(book.title)} — Margin")
        if book.outdated:
            self.statusBar().showMessage(
                "An older version of Margin read this book: its contents pages may be wrong. "
                "Book › Re-read this book fixes them.",
                20000,
            )
        elif notice := _vertical_notice(self.reader.memory.ini, book):
            self.statusBar().showMessage(notice, 30000)  # once per book (issue 45, item 3)
        self.library_panel.select(book.id)
        self.back_to_book.setText(f"← Back to “{book.title}”")
        self.back_to_book.show()
        self.panes.show_reader()
        self.panels.tick_caret(self.reader.typography.caret_browsing)
        if self.panels.reading_settings is not None:
            self.panels.load_reading_settings()
        from desktop.runtime.gc_policy import give_back_soon

        give_back_soon()  # what opening it read and laid out is freed: give the pages back
        return book

    def _text_recognised(self, book_id: int) -> None:
        if self.reader.book is not None and self.reader.book.id == book_id:
            page = self.reader.page
            self.reader.close_book(reopening=True)
            self.open_book(book_id, page)

    def open_page_request(self, request: OpenPageRequest) -> None:
        self.open_book(request.book_id, request.page, request.quote, near=request.near)
        if request.near >= 0 and request.quote:  # an anchor: its words exactly
            from desktop.highlights.margin_marks import mark_exactly

            mark_exactly(self.reader.views, request.page, request.near, request.quote)

    def _page_changed(self, book_id: int, page: int) -> None:
        self.statusBar().showMessage(f"Page {page}", 1500)

    # background work ----------------------------------------------------------------------

    async def shutdown(self) -> None:
        if self._built and hasattr(self.chat, "shutdown"):
            await self.chat.shutdown()
        await self.tasks.shutdown()
        await drain()  # reads under way land before the library closes

    # events ---------------------------------------------------------------------------------

    _closing = False

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.books.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.books.drop(event)

    def discard(self) -> None:
        """Drop a window whose library could not open (start-up tries another way)."""
        self._closing = True
        self.hide()
        self.deleteLater()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._closing = True
        self.importer.cancel()
        if self._built:
            self.reader.save_position()
            self.reader.stop_decoders()  # before the window goes (issue 46)
        self.save_state()
        event.accept()
        self.closed.emit()
