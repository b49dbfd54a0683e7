"""The reader: one open book, its pages, contents, find, highlights and the selection actions.

It shows PDFs with ``PdfView`` and everything else with ``TextView``; both show the pages the
store has, so a page number means the same thing everywhere. Reflowable books read as one
continuous flow (``TextView``); the page at the top of the screen is the page. The position
is saved as the reader moves (debounced): ``page`` follows every move, ``read_to`` (the
assistant's spoiler bound) rises only when the reader reads on, never on a jump. Jumps can be
undone with Back/Forward.
"""

from __future__ import annotations

import asyncio
import locale
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QContextMenuEvent, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.books.model import PageContent
from core.errors import MarginError
from core.prompts import load_prompt
from core.reading import Pace, Place, ReadingSession
from core.search.find import BookText, FindMatch
from core.store.library import HIGHLIGHT_COLOURS, BookInfo, Library
from desktop.reader.footer import Footer
from desktop.reader.selection_bar import ACTIONS, BAR_COLOURS, SelectionBar
from desktop.reader.typography import Typography
from desktop.requests import AskRequest
from desktop.widgets import tool_button

log = logging.getLogger("margin.reader")
SAVE_DELAY_MS = 500
PAGE_ROLE = Qt.ItemDataRole.UserRole + 2
MATCH_ROLE = Qt.ItemDataRole.UserRole + 3
ANCHOR_ROLE = Qt.ItemDataRole.UserRole + 4
MAX_LISTED = 500  # results listed; F3 goes through all of them


def reader_language() -> str:
    code = (locale.getlocale()[0] or "en").split("_")[0]
    names = {
        "en": "English",
        "fr": "French",
        "de": "German",
        "es": "Spanish",
        "it": "Italian",
        "pt": "Portuguese",
        "nl": "Dutch",
        "ja": "Japanese",
        "zh": "Chinese",
    }
    return names.get(code, "English")


class Reader(QWidget):
    requestAsk = Signal(object)  # AskRequest
    pageChanged = Signal(int, int)  # book id, page
    highlightsChanged = Signal(int)  # book id
    fontSizeChanged = Signal(int)  # zoomed with the keys or buttons

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.book: BookInfo | None = None
        self.session: ReadingSession | None = None  # the open book's positions and rules
        self.labels: list[str] = []
        self.view: QWidget | None = None
        self.theme = "light"
        self.settings = QSettings(
            str(library.paths.config / "reader.ini"), QSettings.Format.IniFormat
        )
        self.font_size = _int(self.settings.value("font_size"), 13)
        self.typography = replace(Typography(), font_size=self.font_size)
        self._pending_selection: tuple[int, str, object] | None = None
        self._chapters: list[int] = []  # chapter index of each stored page
        self._page_texts: list[tuple[int, str]] | None = None
        self._page_cache: dict[int, PageContent] = {}
        self._book_text: BookText | None = None
        self._matches: list[FindMatch] = []
        self._match_index = -1
        self._pace = Pace(_float(self.settings.value("seconds_per_page"), 0.0))
        self._jumping = False
        # toolbar
        self.back_button = tool_button("←")
        self.back_button.setToolTip("Back to where you were before the jump (Alt+Left)")
        self.back_button.setAccessibleName("Back")
        self.forward_button = tool_button("→")
        self.forward_button.setToolTip("Forward again (Alt+Right)")
        self.forward_button.setAccessibleName("Forward")
        self.prev_button = tool_button("◀")
        self.prev_button.setToolTip("Previous page (Page Up)")
        self.prev_button.setAccessibleName("Previous page")
        self.next_button = tool_button("▶")
        self.next_button.setToolTip("Next page (Page Down)")
        self.next_button.setAccessibleName("Next page")
        self.page_box = QSpinBox()
        self.page_box.setAccessibleName("Page number")
        self.page_box.setMinimum(1)
        self.page_box.setKeyboardTracking(False)
        self.page_total = QLabel("")
        self.zoom_out_button = tool_button("−")
        self.zoom_out_button.setAccessibleName("Zoom out")
        self.zoom_in_button = tool_button("+")
        self.zoom_in_button.setAccessibleName("Zoom in")
        self.fit_button = tool_button("Fit width")
        self.fit_button.setAccessibleName("Fit width")
        self.read_to_button = tool_button("Read to here")
        self.read_to_button.setToolTip(
            "I have read up to this page: the assistant may read up to here, not further."
        )
        self.read_to_button.setAccessibleName("I have read up to here")
        self.theme_box = QComboBox()
        self.theme_box.addItems(["light", "sepia", "dark"])
        self.theme_box.setAccessibleName("Reading theme")
        self.finished_box = QCheckBox("Finished")
        self.finished_box.setToolTip(
            "Mark the book finished: the assistant may then read all of it (spoilers)."
        )
        self.finished_box.setAccessibleName("Finished this book")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        for left in (
            self.back_button,
            self.forward_button,
            self.prev_button,
            self.page_box,
            self.page_total,
            self.next_button,
        ):
            bar.addWidget(left)
        bar.addStretch(1)
        for w in (
            self.zoom_out_button,
            self.zoom_in_button,
            self.fit_button,
            self.theme_box,
            self.read_to_button,
            self.finished_box,
        ):
            bar.addWidget(w)
        self.back_button.clicked.connect(self.go_back)
        self.forward_button.clicked.connect(self.go_forward)
        self.prev_button.clicked.connect(self.previous_page)
        self.next_button.clicked.connect(self.next_page)
        self.page_box.valueChanged.connect(
            lambda v: self.go_to_page(v) if self.book and v != self.page else None
        )
        self.zoom_in_button.clicked.connect(self.zoom_in)
        self.zoom_out_button.clicked.connect(self.zoom_out)
        self.fit_button.clicked.connect(self.fit_width)
        self.read_to_button.clicked.connect(self.mark_read_to_here)
        self.theme_box.currentTextChanged.connect(self.set_theme)
        self.finished_box.toggled.connect(self._finished_toggled)
        # side panel: contents, find, highlights
        self.toc = QTreeWidget()
        self.toc.setHeaderHidden(True)
        self.toc.setColumnCount(2)
        self.toc.setAccessibleName("Table of contents")
        self.toc.header().setStretchLastSection(False)
        self.toc.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.toc.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.toc.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.toc.itemActivated.connect(self._toc_go)
        self.toc.itemClicked.connect(self._toc_go)
        self.toc.itemClicked.connect(self._focus_book)
        self.toc_empty = QLabel(
            "This book has no table of contents. Use Find (Ctrl+F) or Go to page (Ctrl+G) "
            "to move around."
        )
        self.toc_empty.setWordWrap(True)
        self.toc_empty.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.toc_empty.setContentsMargins(8, 8, 8, 8)
        self.toc_stack = QStackedWidget()
        self.toc_stack.addWidget(self.toc)
        self.toc_stack.addWidget(self.toc_empty)
        self.find_box = QLineEdit(placeholderText="Find in book…")
        self.find_box.setAccessibleName("Find in book")
        self.find_box.setClearButtonEnabled(True)
        self.find_box.returnPressed.connect(self.run_find)
        self.whole_word_box = QCheckBox("Whole words")
        self.exact_box = QCheckBox("Exact phrase")
        self.exact_box.setToolTip("Match case and punctuation exactly as typed")
        self.find_count = QLabel("")
        self.find_count.setAccessibleName("Number of matches")
        self.find_prev_button = tool_button("▲")
        self.find_prev_button.setToolTip("Previous match (Shift+F3)")
        self.find_prev_button.setAccessibleName("Previous match")
        self.find_next_button = tool_button("▼")
        self.find_next_button.setToolTip("Next match (F3)")
        self.find_next_button.setAccessibleName("Next match")
        self.find_prev_button.clicked.connect(lambda: self.find_next(-1))
        self.find_next_button.clicked.connect(lambda: self.find_next(1))
        self.find_results = QListWidget()
        self.find_results.setAccessibleName("Find results")
        self.find_results.setWordWrap(True)
        self.find_results.itemActivated.connect(self._result_go)
        self.find_results.itemClicked.connect(self._result_go)
        self.find_results.itemClicked.connect(self._focus_book)
        find_panel = QWidget()
        fl = QVBoxLayout(find_panel)
        fl.setContentsMargins(0, 0, 0, 0)
        fl.addWidget(self.find_box)
        options = QHBoxLayout()
        options.addWidget(self.whole_word_box)
        options.addWidget(self.exact_box)
        options.addStretch(1)
        fl.addLayout(options)
        counts = QHBoxLayout()
        counts.addWidget(self.find_count, 1)
        counts.addWidget(self.find_prev_button)
        counts.addWidget(self.find_next_button)
        fl.addLayout(counts)
        fl.addWidget(self.find_results)
        self.highlight_list = QListWidget()
        self.highlight_list.setAccessibleName("Highlights")
        self.highlight_list.setWordWrap(True)
        self.highlight_list.itemActivated.connect(self._result_go)
        self.highlight_list.itemClicked.connect(self._result_go)
        self.highlight_list.itemClicked.connect(self._focus_book)
        self.side = QTabWidget()
        self.side.addTab(self.toc_stack, "Contents")
        self.side.addTab(find_panel, "Find")
        self.side.addTab(self.highlight_list, "Highlights")
        self.stack = QStackedWidget()
        self.placeholder = QLabel("Open a book from the library, or drag a file here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.placeholder)
        self.footer = Footer()
        book_side = QWidget()
        bl = QVBoxLayout(book_side)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(0)
        bl.addWidget(self.stack, 1)
        bl.addWidget(self.footer)
        self.split = QSplitter()
        self.split.addWidget(self.side)
        self.split.addWidget(book_side)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([200, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toolbar = QWidget()  # the window hides it in focus mode
        self.toolbar.setLayout(bar)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.split, 1)
        self.selection_bar = SelectionBar(self)
        self.selection_bar.actionChosen.connect(self._action)
        self._save_timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_position)
        self._drawn_event: asyncio.Event | None = None
        self._shortcuts()
        self._set_enabled(False)

    def _shortcuts(self) -> None:
        """Keys that work anywhere in the reader (the window's menu has the others)."""
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        table: list[tuple[str, Any]] = [
            ("Alt+Left", self.go_back),
            ("Alt+Right", self.go_forward),
            ("F3", lambda: self.find_next(1)),
            ("Shift+F3", lambda: self.find_next(-1)),
            ("Ctrl+Shift+D", lambda: self._action("define")),
            ("Ctrl+Shift+S", lambda: self._action("summarize")),
            ("Ctrl+Shift+T", lambda: self._action("translate")),
            ("Ctrl+Shift+R", self.mark_read_to_here),
        ]
        for i, colour in enumerate(BAR_COLOURS, start=1):
            table.append((f"Ctrl+{i}", lambda c=colour: self._action(f"highlight:{c}")))
        self.reader_actions: dict[str, QAction] = {}
        for keys, slot in table:
            action = QAction(keys, self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(context)
            action.triggered.connect(slot)
            self.addAction(action)
            self.reader_actions[keys] = action

    def _set_enabled(self, enabled: bool) -> None:
        for w in (
            self.prev_button,
            self.next_button,
            self.page_box,
            self.zoom_in_button,
            self.zoom_out_button,
            self.fit_button,
            self.theme_box,
            self.finished_box,
            self.read_to_button,
        ):
            w.setEnabled(enabled)
        self._history_buttons()

    @property
    def page(self) -> int:
        """The page on screen (1 when no book is open)."""
        return self.session.page if self.session is not None else 1

    def _history_buttons(self) -> None:
        history = self.session.history if self.session is not None else None
        self.back_button.setEnabled(history is not None and history.can_back())
        self.forward_button.setEnabled(history is not None and history.can_forward())

    # opening --------------------------------------------------------------------------

    def open_book(self, book: BookInfo, page: int | None = None) -> None:
        """Show ``book`` at ``page`` (its saved position when None)."""
        self.save_position()
        self.close_book()
        self.book = book
        self._page_texts = None
        self._book_text = None
        self._page_cache = {}
        self._pace = Pace(self._pace.seconds_per_page() if self._pace.measured() else None)
        self.session = ReadingSession.of(book, pace=self._pace)
        self.labels = self.library.page_labels(book.id)
        self._chapters = [
            int(row[0])
            for row in self.library.db.execute_sql(
                "SELECT chapter FROM page WHERE book_id = ? ORDER BY number", (book.id,)
            ).fetchall()
        ]
        path = Path(book.file_path) if book.file_path else None
        if book.format == "pdf":
            from desktop.reader.pdf_view import PdfView

            if path is None or not path.exists():
                raise MarginError(
                    "missing_file",
                    f'The file of "{book.title}" is missing from the library folder.',
                    hint="Remove the book and add it again.",
                )
            pdf = PdfView(path)
            from desktop.theme import page_image_filter

            pdf.image_filter = page_image_filter(self.theme)
            zoom = self.settings.value(f"book/{book.id}/zoom")
            if zoom not in (None, "", "fit"):
                pdf.scale = max(0.3, min(_float(zoom, 1.3), 6.0))
                pdf.fit_width = False
                pdf._layout()
            pdf.pageChanged.connect(self._pdf_page_changed)
            pdf.drawn.connect(self._view_drawn)
            pdf.zoomChanged.connect(self._remember_zoom)
            pdf.requestBack.connect(self.go_back)
            pdf.requestForward.connect(self.go_forward)
            pdf.canvas.selectionFinished.connect(self._pdf_selected)
            pdf.canvas.selectionCleared.connect(self.selection_bar.hide)
            pdf.canvas.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            pdf.canvas.customContextMenuRequested.connect(
                lambda pos: self._context_menu(pdf.canvas.mapToGlobal(pos))
            )
            view: QWidget = pdf
            self.zoom_in_button.setVisible(True)
            self.zoom_out_button.setVisible(True)
            self.fit_button.setVisible(True)
        else:
            from desktop.reader.text_view import TextView

            text_view = TextView(path, book.format)
            text_view.font_size = self.font_size
            text_view.typography = self.typography
            text_view.set_theme(self.theme)
            text_view.set_source(self._load_page, book.page_count)
            text_view.selectionChanged.connect(self._text_selection_changed)
            text_view.topPageChanged.connect(self._text_top_changed)
            text_view.chapterEdge.connect(self.chapter_edge)
            text_view.requestBack.connect(self.go_back)
            text_view.requestForward.connect(self.go_forward)
            text_view.imageOpened.connect(self._show_image)
            text_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            text_view.customContextMenuRequested.connect(
                lambda pos: self._context_menu(text_view.viewport().mapToGlobal(pos))
            )
            view = text_view
            self.fit_button.setVisible(False)
        self.view = view
        self.stack.addWidget(view)
        self.stack.setCurrentWidget(view)
        self.page_box.blockSignals(True)
        self.page_box.setMaximum(max(1, book.page_count))
        self.page_box.blockSignals(False)
        self.page_total.setText(f"of {book.page_count}")
        self.finished_box.blockSignals(True)
        self.finished_box.setChecked(book.finished)
        self.finished_box.blockSignals(False)
        self._fill_toc()
        self.refresh_highlights()
        self.find_results.clear()
        self.find_count.setText("")
        self._matches = []
        self._set_enabled(True)
        self.library.mark_opened(book.id)
        offset = 0
        if page is None:  # reopening: the same words at the top as when it was left
            saved = str(self.settings.value(f"book/{book.id}/place", ""))
            where, _, within = saved.partition(":")
            if where == str(book.page) and within.isdigit():
                offset = int(within)
        self.go_to_page(page or book.page or 1, remember=False, offset=offset)
        view.setFocus()

    def close_book(self) -> None:
        if self.view is not None:
            self.stack.removeWidget(self.view)
            self.view.deleteLater()
            self.view = None
        self.book = None
        self.session = None
        self.selection_bar.hide()
        self.toc.clear()
        self.highlight_list.clear()
        self.footer.clear()
        self.stack.setCurrentWidget(self.placeholder)
        self._set_enabled(False)

    def _fill_toc(self) -> None:
        self.toc.clear()
        assert self.book is not None
        parents: list[QTreeWidgetItem] = []
        self._toc_items: list[tuple[int, QTreeWidgetItem]] = []
        for entry in self.library.toc(self.book.id):
            item = QTreeWidgetItem([entry.title, self._short_label(entry.page)])
            item.setData(0, PAGE_ROLE, entry.page)
            item.setToolTip(0, f"{entry.title} — {self._label(entry.page)}")
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            level = max(1, entry.level)
            parents = parents[: level - 1]
            if parents:
                parents[-1].addChild(item)
            else:
                self.toc.addTopLevelItem(item)
            parents.append(item)
            self._toc_items.append((entry.page, item))
        self.toc.expandToDepth(0)
        self.toc_stack.setCurrentWidget(self.toc if self._toc_items else self.toc_empty)

    def _short_label(self, page: int) -> str:
        return self.labels[page - 1] if 0 < page <= len(self.labels) else str(page)

    def _label(self, page: int) -> str:
        label = self.labels[page - 1] if 0 < page <= len(self.labels) else str(page)
        return f"p. {page}" if label == str(page) else f"p. {page} ({label})"

    def current_chapter(self) -> QTreeWidgetItem | None:
        """The contents entry the current page belongs to."""
        found = None
        for page, item in getattr(self, "_toc_items", []):
            if page and page <= self.page:
                found = item
        return found

    def _show_chapter(self) -> None:
        current = self.current_chapter()
        for _page, item in getattr(self, "_toc_items", []):
            bold = item is current
            if item.font(0).bold() != bold:
                font = item.font(0)
                font.setBold(bold)
                item.setFont(0, font)
                item.setFont(1, font)
        if current is not None and self.toc.currentItem() is not current:
            self.toc.blockSignals(True)
            self.toc.setCurrentItem(current)
            self.toc.blockSignals(False)
            self.toc.scrollToItem(current)

    # navigation ------------------------------------------------------------------------

    def position(self) -> tuple[int, int]:
        """(page, offset) of what is on screen now: where Back returns to."""
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, TextView) and self.view.loaded:
            return self.view.top_position()
        if isinstance(self.view, PdfView):
            return self.view.position()
        return (self.page, 0)

    def go_to_page(
        self,
        page: int,
        *,
        mark: str = "",
        reading: bool = False,
        remember: bool = True,
        offset: int = 0,
        near: int = 0,
        at: int = -1,
    ) -> None:
        """Show ``page``. ``reading`` is True only when the reader read on to it (next page);
        jumps leave the spoiler bound (``read_to``) where it is and can be undone with Back.
        ``mark`` is marked where it really is (it may start on the page before or run on to
        the next) and scrolled into view; ``near`` is its offset in the stored page text,
        ``at`` its offset in the page as the text view lays it out (highlight anchors)."""
        if self.book is None or self.session is None:
            return
        page = max(1, min(int(page), max(1, self.book.page_count)))
        if remember and not reading and self.view is not None and not self._jumping:
            # one push per user action: a caller that jumps twice in a row (to the page, then
            # to the mark on it) must not leave the half-way place in the history
            self.session.history.push(Place(*self.position()))
            self._history_buttons()
            self._jumping = True
            QTimer.singleShot(0, self._jump_done)
        self.selection_bar.hide()
        if self._drawn_event is not None:
            self._drawn_event.clear()
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        shown = page
        if isinstance(self.view, PdfView):
            if mark:
                found = self.view.mark_text(page, mark)
                if (
                    not found
                    and page < self.book.page_count
                    and self.view.mark_text(page + 1, mark)
                ):
                    shown = page + 1
                if self.view.mark is not None:
                    self.view.show_mark()
                else:
                    self.view.go_to_page(page)
            else:
                self.view.mark = None
                self.view.go_to_page(page, offset * self.view.scale)
        elif isinstance(self.view, TextView):
            position = at
            if mark and near:
                # stored text separates paragraphs with a blank line, the view with one break
                text = self._stored_text(page)
                position = max(0, near - 1 - text[: near - 1].count("\n\n"))
            found = self.view.show_at(page, offset, mark=mark, near=position)
            if found:
                shown = self.view.marked_page()
            self._view_drawn()
        self._page_shown(shown, reading=reading)

    def _load_page(self, number: int) -> PageContent:
        """A stored page for the text view, read in small batches (one query for several
        pages: a screen turn must stay well under a frame)."""
        cached = self._page_cache.get(number)
        if cached is not None:
            return cached
        assert self.book is not None
        count = max(1, self.book.page_count)
        first, last = max(1, number - 4), min(count, number + 8)
        if not first <= number <= last:
            return self.library.page(self.book.id, number)  # raises a clear BookError
        if len(self._page_cache) > 200:
            self._page_cache.clear()
        for content in self.library.pages(self.book.id, first, last):
            self._page_cache[content.number] = PageContent(
                content.number,
                content.label or str(content.number),
                content.text or "",
                content.html,
                content.chapter,
            )
        found = self._page_cache.get(number)
        if found is None:
            return self.library.page(self.book.id, number)  # raises a clear BookError
        return found

    def _jump_done(self) -> None:
        self._jumping = False

    def _stored_text(self, page: int) -> str:
        if self._page_texts is not None and 0 < page <= len(self._page_texts):
            return self._page_texts[page - 1][1]
        assert self.book is not None
        return self.library.page(self.book.id, page).text

    def _page_shown(self, page: int, *, reading: bool = False) -> None:
        """The view shows ``page``: the session decides what the move means."""
        if self.session is None:
            return
        if reading:
            self.session.read_on(page)
        else:
            self.session.moved(page)
        self.page_box.blockSignals(True)
        self.page_box.setValue(page)
        self.page_box.blockSignals(False)
        label = self.labels[page - 1] if 0 < page <= len(self.labels) else ""
        self.page_box.setToolTip(f"Printed page {label}" if label and label != str(page) else "")
        self.prev_button.setEnabled(page > 1)
        self.next_button.setEnabled(self.book is not None and page < self.book.page_count)
        self._save_timer.start()
        self._show_chapter()
        self._update_footer()
        if self.book is not None:
            self.pageChanged.emit(self.book.id, page)

    def _text_top_changed(self, page: int, by_reader: bool) -> None:
        if by_reader and page != self.page:
            self._page_shown(page, reading=0 < page - self.page <= 2)

    def _pdf_page_changed(self, page: int) -> None:
        if page != self.page:
            # scrolling on to the next page is reading; anything else is a jump
            self._page_shown(page, reading=page == self.page + 1)

    def next_page(self) -> None:
        if self.book is not None and self.page < self.book.page_count:
            self.go_to_page(self.page + 1, reading=True)

    def previous_page(self) -> None:
        if self.page > 1:
            self.go_to_page(self.page - 1, remember=False)

    def next_screen(self) -> bool:
        """One screen on (Page Down, Space): no text is skipped."""
        view = self.view
        if view is not None and hasattr(view, "next_screen"):
            return bool(view.next_screen())
        return False

    def previous_screen(self) -> bool:
        view = self.view
        if view is not None and hasattr(view, "previous_screen"):
            return bool(view.previous_screen())
        return False

    def chapter_edge(self, end: bool) -> None:
        """Home / End: the start or the end of the current chapter (a jump)."""
        if self.book is None or not self._chapters:
            return
        chapter = self._chapters[self.page - 1] if self.page <= len(self._chapters) else 0
        pages = [i + 1 for i, c in enumerate(self._chapters) if c == chapter]
        if not pages:
            return
        from desktop.reader.text_view import TextView

        if not end:
            self.go_to_page(pages[0])
            return
        self.go_to_page(pages[-1])
        if isinstance(self.view, TextView):
            self.view.show_end_of(pages[-1])

    def go_back(self) -> None:
        """Back to where the reader was before the jump (where reading stopped)."""
        if self.session is None:
            return
        target = self.session.back(Place(*self.position()))
        if target is not None:
            self.go_to_page(target.page, offset=target.offset, remember=False)
        self._history_buttons()

    def go_forward(self) -> None:
        if self.session is None:
            return
        target = self.session.forward(Place(*self.position()))
        if target is not None:
            self.go_to_page(target.page, offset=target.offset, remember=False)
        self._history_buttons()

    def mark_read_to_here(self) -> None:
        """ "Read to here": the spoiler bound becomes the page on screen, on purpose."""
        if self.session is None:
            return
        self.session.read_to_here()
        self.save_position()
        self._update_footer()

    def save_position(self) -> None:
        if self.book is not None and self.session is not None:
            try:
                self.book = self.session.save(self.library)
            except MarginError:
                log.info("position not saved: the book is gone")
            here, within = self.position()
            if here == self.page:
                self.settings.setValue(f"book/{self.book.id}/place", f"{here}:{within}")
            if self.session.pace.measured():
                pace = round(self.session.pace.seconds_per_page(), 1)
                self.settings.setValue("seconds_per_page", pace)

    def _finished_toggled(self, checked: bool) -> None:
        if self.book is not None and self.session is not None:
            self.book = self.library.set_finished(self.book.id, checked)
            self.session.set_finished(checked)
            self._update_footer()

    def _update_footer(self) -> None:
        if self.book is None or self.session is None:
            self.footer.clear()
            return
        chapter = self.current_chapter()
        title = chapter.text(0) if chapter is not None else ""
        total = max(1, self.book.page_count)
        percent = round(100 * self.page / total)
        parts = [title, f"p. {self.page} of {total}", f"{percent}%"]
        if self._chapters and self.page <= len(self._chapters):
            current = self._chapters[self.page - 1]
            left = sum(1 for c in self._chapters[self.page - 1 :] if c == current)
            minutes = max(1, round(left * self.session.pace.seconds_per_page() / 60))
            parts.append(f"about {minutes} min left in chapter")
        self.footer.set_progress("  ·  ".join(p for p in parts if p))
        self.footer.set_looking_ahead(self.session.bound_note())

    # drawing -----------------------------------------------------------------------------

    def _view_drawn(self) -> None:
        if self._drawn_event is not None:
            self._drawn_event.set()

    async def wait_drawn(self, limit: float = 10.0) -> None:
        """Wait until the current page is painted (PDF pages render in threads)."""
        from desktop.reader.pdf_view import PdfView

        if self._drawn_event is None:
            self._drawn_event = asyncio.Event()
        if isinstance(self.view, PdfView):
            from PySide6.QtWidgets import QApplication

            QApplication.processEvents()  # let the splitter settle the final width
            self.view.settle()
            if self.view.is_drawn():
                await asyncio.sleep(0.05)
                return
            self.view.canvas.update()
            async with asyncio.timeout(limit):
                await self._drawn_event.wait()
        await asyncio.sleep(0.05)  # let the last paint reach the screen

    # zoom, fonts, themes ------------------------------------------------------------------

    def zoom_in(self) -> None:
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, PdfView):
            self.view.zoom_in()
        elif isinstance(self.view, TextView):
            self.set_font_size(self.font_size + 1)

    def zoom_out(self) -> None:
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, PdfView):
            self.view.zoom_out()
        elif isinstance(self.view, TextView):
            self.set_font_size(self.font_size - 1)

    def set_font_size(self, size: int) -> None:
        from desktop.reader.text_view import TextView

        self.font_size = max(8, min(size, 40))
        self.settings.setValue("font_size", self.font_size)
        self.typography = replace(self.typography, font_size=self.font_size)
        if isinstance(self.view, TextView):
            self.view.set_font_size(self.font_size)
        self.fontSizeChanged.emit(self.font_size)

    def set_typography(self, typography: Typography) -> None:
        """The look of reflowable books (font, spacing, measure), applied live."""
        from desktop.reader.text_view import TextView

        self.typography = typography
        self.font_size = max(8, min(typography.font_size, 40))
        if isinstance(self.view, TextView):
            self.view.set_typography(typography)

    def _remember_zoom(self, scale: float, fit: bool) -> None:
        if self.book is not None:
            self.settings.setValue(f"book/{self.book.id}/zoom", "fit" if fit else round(scale, 3))

    def fit_width(self) -> None:
        from desktop.reader.pdf_view import PdfView

        if isinstance(self.view, PdfView):
            self.view.fit()

    def set_theme(self, name: str) -> None:
        from desktop.reader.text_view import TextView

        self.theme = name
        if self.theme_box.currentText() != name:
            self.theme_box.setCurrentText(name)
        if isinstance(self.view, TextView):
            self.view.set_theme(name)
        else:
            from desktop.reader.pdf_view import PdfView
            from desktop.theme import page_image_filter

            if isinstance(self.view, PdfView):
                self.view.set_image_filter(page_image_filter(name))

    def _show_image(self, url: str) -> None:
        from desktop.reader.image_viewer import show_image
        from desktop.reader.text_view import TextView

        if isinstance(self.view, TextView):
            show_image(self, self.view, url)

    # find and contents -------------------------------------------------------------------

    def page_texts(self) -> list[tuple[int, str]]:
        """Every stored page's text, read once per book."""
        if self._page_texts is None:
            assert self.book is not None
            self._page_texts = self.library.page_texts(self.book.id)
        return self._page_texts

    def run_find(self) -> None:
        self.find_results.clear()
        self._matches = []
        self._match_index = -1
        query = self.find_box.text().strip()
        if self.book is None or not query:
            self.find_count.setText("")
            return
        if self._book_text is None:
            self._book_text = BookText(self.page_texts())
        try:
            self._matches = self._book_text.find(
                query,
                whole_word=self.whole_word_box.isChecked(),
                exact=self.exact_box.isChecked(),
                snippets=MAX_LISTED,
            )
        except MarginError as exc:
            self.find_count.setText(exc.message)
            return
        count = len(self._matches)
        if not count:
            self.find_count.setText(f"Nothing matches “{query}”.")
        else:
            self.find_count.setText("1 match" if count == 1 else f"{count} matches")
        for i, match in enumerate(self._matches[:MAX_LISTED]):
            item = QListWidgetItem(
                f"{self._label(match.page)} — …{match.before} {match.text} {match.after}…"
            )
            item.setData(PAGE_ROLE, (match.page, match.text))
            item.setData(MATCH_ROLE, i)
            self.find_results.addItem(item)
        self.side.setCurrentIndex(1)

    def find_next(self, step: int = 1) -> None:
        """F3 / Shift+F3: the next or previous match after the page on screen."""
        if not self._matches:
            if self.find_box.text().strip() and self.book is not None:
                self.run_find()
            if not self._matches:
                return
        if self._match_index < 0:
            if step > 0:
                later = [i for i, m in enumerate(self._matches) if m.page >= self.page]
                index = later[0] if later else 0
            else:
                earlier = [i for i, m in enumerate(self._matches) if m.page <= self.page]
                index = earlier[-1] if earlier else len(self._matches) - 1
        else:
            index = (self._match_index + step) % len(self._matches)
        self._go_match(index)

    def _go_match(self, index: int) -> None:
        self._match_index = index
        match = self._matches[index]
        if index < self.find_results.count():
            self.find_results.blockSignals(True)
            self.find_results.setCurrentRow(index)
            self.find_results.blockSignals(False)
        count = len(self._matches)
        self.find_count.setText(f"{index + 1} of {count} matches")
        self.go_to_page(match.page, mark=match.text, near=match.offset + 1)

    def focus_find(self) -> None:
        self.side.setCurrentIndex(1)
        self.find_box.setFocus()
        self.find_box.selectAll()

    def _focus_book(self, *_: object) -> None:
        """After a click in a side list, the keys (Page Down, Space) read the book again."""
        if self.view is not None:
            self.view.setFocus()

    def _toc_go(self, item: QTreeWidgetItem, *_: object) -> None:
        page = item.data(0, PAGE_ROLE)
        if page:
            self.go_to_page(int(page))

    def _result_go(self, item: QListWidgetItem) -> None:
        index = item.data(MATCH_ROLE)
        if isinstance(index, int) and 0 <= index < len(self._matches):
            self._go_match(index)
            return
        data = item.data(PAGE_ROLE)
        anchor = item.data(ANCHOR_ROLE)
        if anchor:  # a highlight that knows exactly where it starts
            page, mark = data
            self.go_to_page(int(anchor[0]), mark=mark, at=int(anchor[1]))
        elif data:
            page, mark = data
            self.go_to_page(int(page), mark=mark)

    # selection and actions -----------------------------------------------------------------

    def selection(self) -> tuple[int, str, object] | None:
        """(page, text, anchor) of the current selection, if any."""
        from desktop.reader.text_view import TextView

        if isinstance(self.view, TextView):
            text = self.view.selected_text()
            if not text:
                return None
            return (self.view.selection_page() or self.page, text, self.view.selection_anchor())
        return self._pending_selection

    def _text_selection_changed(self) -> None:
        from desktop.reader.text_view import TextView

        if not isinstance(self.view, TextView):
            return
        if self.view.selected_text():
            viewport = self.view.viewport()
            rect = self.view.cursorRect()
            y = min(max(rect.bottom(), 0), viewport.height() - self.selection_bar.height() - 40)
            x = min(max(rect.center().x(), 0), viewport.width())
            self.selection_bar.show_at(viewport.mapTo(self, QPoint(x, y)))
        else:
            self.selection_bar.hide()

    def _pdf_selected(self, page: int, text: str, polys: object) -> None:
        self._pending_selection = (page, text, {"polys": polys})
        from desktop.reader.pdf_view import PdfView

        if isinstance(self.view, PdfView):
            pos = self.view.canvas.mapFromGlobal(self.cursor().pos())
            viewport = self.view.viewport()
            inside = viewport.mapFrom(self.view.canvas, pos)
            inside.setY(min(max(inside.y(), 0), viewport.height() - 60))
            inside.setX(min(max(inside.x(), 0), viewport.width()))
            self.selection_bar.show_at(viewport.mapTo(self, inside))

    def _context_menu(self, global_pos: QPoint) -> None:
        self.build_context_menu().exec(global_pos)

    def build_context_menu(self) -> QMenu:
        menu = QMenu(self)
        has = self.selection() is not None
        for key, label in ACTIONS:
            action = QAction(label, menu)
            action.setEnabled(has)
            action.triggered.connect(lambda _=False, k=key: self._action(k))
            menu.addAction(action)
        menu.addSeparator()
        hl = QAction("Highlight", menu)
        hl.setEnabled(has)
        hl.triggered.connect(lambda: self._action("highlight"))
        menu.addAction(hl)
        menu.addSeparator()
        if self.session is not None and self.session.history.can_back():
            back = QAction("Back", menu)
            back.triggered.connect(self.go_back)
            menu.addAction(back)
        read_to = QAction("I have read up to here", menu)
        read_to.setEnabled(self.book is not None)
        read_to.triggered.connect(self.mark_read_to_here)
        menu.addAction(read_to)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self._context_menu(event.globalPos())

    def ask_about_selection(self, action: str = "ask") -> bool:
        return self._action(action)

    def _action(self, action: str) -> bool:
        sel = self.selection()
        if sel is None or self.book is None:
            return False
        page, text, anchor = sel
        self.selection_bar.hide()
        if action == "highlight" or action.startswith("highlight:"):
            colour = action.partition(":")[2] or "yellow"
            return self.save_highlight(page, text, anchor, colour)
        prompt = ""
        if action != "ask":
            prompt = load_prompt(
                f"actions/{action}",
                selection=text,
                page=str(page),
                book_title=self.book.title,
                language=reader_language(),
            )
        self.requestAsk.emit(AskRequest(self.book.id, page, text, action, prompt))
        return True

    def save_highlight(
        self,
        page: int,
        text: str,
        anchor: object = None,
        colour: str = "yellow",
        note: str | None = None,
    ) -> bool:
        """Save a highlight (asking for an optional note); False when the reader cancels."""
        if self.book is None:
            return False
        if note is None and self.isVisible() and not self.property("headless"):
            note, ok = QInputDialog.getText(self, "Highlight", "Note (optional):")
            if not ok:
                return False
        self.library.add_highlight(
            self.book.id,
            page,
            text,
            note=note or "",
            colour=colour if colour in HIGHLIGHT_COLOURS else "yellow",
            anchor=anchor,
        )
        self.refresh_highlights()
        self.highlightsChanged.emit(self.book.id)
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, PdfView):
            self.view.clear_selection()
        elif isinstance(self.view, TextView):
            cursor = self.view.textCursor()
            cursor.clearSelection()
            self.view.setTextCursor(cursor)
        return True

    def refresh_highlights(self) -> None:
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import Span, TextView

        self.highlight_list.clear()
        if self.book is None:
            return
        items = self.library.list_highlights(self.book.id)
        for h in items:
            note = f"\n{h.note}" if h.note else ""
            item = QListWidgetItem(f"{self._label(h.page)} — {h.text[:160]}{note}")
            item.setData(PAGE_ROLE, (h.page, h.text))
            start = h.anchor.get("start") if isinstance(h.anchor, dict) else None
            if isinstance(start, dict) and isinstance(start.get("offset"), int):
                item.setData(ANCHOR_ROLE, (int(start.get("page", h.page)), start["offset"]))
            self.highlight_list.addItem(item)
        if isinstance(self.view, PdfView):
            self.view.set_highlights(
                [
                    (h.page, h.colour, (h.anchor or {}).get("polys", []))
                    for h in items
                    if isinstance(h.anchor, dict)
                ]
            )
        elif isinstance(self.view, TextView):
            spans = []
            for h in items:
                start = end = None
                anchor = h.anchor if isinstance(h.anchor, dict) else {}
                try:
                    s, e = anchor["start"], anchor["end"]
                    start = (int(s["page"]), int(s["offset"]))
                    end = (int(e["page"]), int(e["offset"]))
                except (KeyError, TypeError, ValueError):
                    start = end = None
                spans.append(Span(h.page, h.text, h.colour, start, end))
            self.view.set_spans(spans)


def _int(value: object, default: int) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def _float(value: object, default: float) -> float:
    try:
        return float(str(value))
    except (TypeError, ValueError):
        return default
