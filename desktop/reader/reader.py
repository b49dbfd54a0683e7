"""The reader: one open book, its pages, contents, find, highlights and the selection actions.

It shows PDFs with ``PdfView`` and everything else with ``TextView``; both show the pages the
store has, so a page number means the same thing everywhere. The reading position is saved
as the reader turns pages (debounced): it is the spoiler bound for the assistant.
"""

from __future__ import annotations

import asyncio
import locale
import logging
from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QContextMenuEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
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

from core.errors import MarginError
from core.prompts import load_prompt
from core.store.library import HIGHLIGHT_COLOURS, BookInfo, Library
from desktop.reader.selection_bar import ACTIONS, SelectionBar
from desktop.requests import AskRequest
from desktop.widgets import tool_button

log = logging.getLogger("margin.reader")
SAVE_DELAY_MS = 500
PAGE_ROLE = Qt.ItemDataRole.UserRole + 2


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

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.book: BookInfo | None = None
        self.page = 1
        self._reached = 0  # furthest page reached by reading since the last save
        self.labels: list[str] = []
        self.view: QWidget | None = None
        self.theme = "light"
        self.font_size = 13
        self._pending_selection: tuple[int, str, object] | None = None
        # toolbar
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
        for left in (self.prev_button, self.page_box, self.page_total, self.next_button):
            bar.addWidget(left)
        bar.addStretch(1)
        for w in (
            self.zoom_out_button,
            self.zoom_in_button,
            self.fit_button,
            self.theme_box,
            self.finished_box,
        ):
            bar.addWidget(w)
        self.prev_button.clicked.connect(self.previous_page)
        self.next_button.clicked.connect(self.next_page)
        self.page_box.valueChanged.connect(
            lambda v: self.go_to_page(v) if self.book and v != self.page else None
        )
        self.zoom_in_button.clicked.connect(self.zoom_in)
        self.zoom_out_button.clicked.connect(self.zoom_out)
        self.fit_button.clicked.connect(self.fit_width)
        self.theme_box.currentTextChanged.connect(self.set_theme)
        self.finished_box.toggled.connect(self._finished_toggled)
        # side panel: contents, find, highlights
        self.toc = QTreeWidget()
        self.toc.setHeaderHidden(True)
        self.toc.setAccessibleName("Table of contents")
        self.toc.itemActivated.connect(self._toc_go)
        self.toc.itemClicked.connect(self._toc_go)
        self.find_box = QLineEdit(placeholderText="Find in book…")
        self.find_box.setAccessibleName("Find in book")
        self.find_box.setClearButtonEnabled(True)
        self.find_box.returnPressed.connect(self.run_find)
        self.find_results = QListWidget()
        self.find_results.setAccessibleName("Find results")
        self.find_results.setWordWrap(True)
        self.find_results.itemActivated.connect(self._result_go)
        self.find_results.itemClicked.connect(self._result_go)
        find_panel = QWidget()
        fl = QVBoxLayout(find_panel)
        fl.setContentsMargins(0, 0, 0, 0)
        fl.addWidget(self.find_box)
        fl.addWidget(self.find_results)
        self.highlight_list = QListWidget()
        self.highlight_list.setAccessibleName("Highlights")
        self.highlight_list.setWordWrap(True)
        self.highlight_list.itemActivated.connect(self._result_go)
        self.highlight_list.itemClicked.connect(self._result_go)
        self.side = QTabWidget()
        self.side.addTab(self.toc, "Contents")
        self.side.addTab(find_panel, "Find")
        self.side.addTab(self.highlight_list, "Highlights")
        self.stack = QStackedWidget()
        self.placeholder = QLabel("Open a book from the library, or drag a file here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.placeholder)
        self.split = QSplitter()
        self.split.addWidget(self.side)
        self.split.addWidget(self.stack)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([200, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.split, 1)
        self.selection_bar = SelectionBar(self)
        self.selection_bar.actionChosen.connect(self._action)
        self._save_timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_position)
        self._drawn_event: asyncio.Event | None = None
        self._set_enabled(False)

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
        ):
            w.setEnabled(enabled)

    # opening --------------------------------------------------------------------------

    def open_book(self, book: BookInfo, page: int | None = None) -> None:
        """Show ``book`` at ``page`` (its saved position when None)."""
        self.save_position()
        self.close_book()
        self.book = book
        self._reached = 0
        self.labels = self.library.page_labels(book.id)
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
            pdf.pageChanged.connect(self._pdf_page_changed)
            pdf.drawn.connect(self._view_drawn)
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
            text_view.set_theme(self.theme)
            text_view.font_size = self.font_size
            text_view.selectionChanged.connect(self._text_selection_changed)
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
        self._set_enabled(True)
        self.library.mark_opened(book.id)
        self.go_to_page(page or book.page or 1)

    def close_book(self) -> None:
        if self.view is not None:
            self.stack.removeWidget(self.view)
            self.view.deleteLater()
            self.view = None
        self.book = None
        self.selection_bar.hide()
        self.toc.clear()
        self.highlight_list.clear()
        self.stack.setCurrentWidget(self.placeholder)
        self._set_enabled(False)

    def _fill_toc(self) -> None:
        self.toc.clear()
        assert self.book is not None
        parents: list[QTreeWidgetItem] = []
        for entry in self.library.toc(self.book.id):
            item = QTreeWidgetItem([f"{entry.title}  ·  {self._label(entry.page)}"])
            item.setData(0, PAGE_ROLE, entry.page)
            item.setToolTip(0, entry.title)
            level = max(1, entry.level)
            parents = parents[: level - 1]
            if parents:
                parents[-1].addChild(item)
            else:
                self.toc.addTopLevelItem(item)
            parents.append(item)
        self.toc.expandToDepth(0)

    def _label(self, page: int) -> str:
        label = self.labels[page - 1] if 0 < page <= len(self.labels) else str(page)
        return f"p. {page}" if label == str(page) else f"p. {page} ({label})"

    # navigation ------------------------------------------------------------------------

    def go_to_page(self, page: int, *, mark: str = "", reading: bool = False) -> None:
        """Show ``page``. ``reading`` is True only when the reader read on to it (next page);
        jumps leave the spoiler bound (``read_to``) where it is."""
        if self.book is None:
            return
        page = max(1, min(int(page), max(1, self.book.page_count)))
        self.page = page
        self.selection_bar.hide()
        if self._drawn_event is not None:
            self._drawn_event.clear()
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, PdfView):
            if self.view.current != page or not self.view.is_drawn():
                self.view.go_to_page(page)
            if mark:
                self.view.mark_text(page, mark)
            else:
                self.view.mark = None
        elif isinstance(self.view, TextView):
            content = self.library.page(self.book.id, page)
            highlights = [
                (h.text, h.colour) for h in self.library.list_highlights(self.book.id, page)
            ]
            self.view.show_page(content, highlights, mark)
            self._view_drawn()
        self._page_shown(page, reading=reading)

    def _page_shown(self, page: int, *, reading: bool = False) -> None:
        if reading:
            self._reached = max(self._reached, page)
        self.page = page
        self.page_box.blockSignals(True)
        self.page_box.setValue(page)
        self.page_box.blockSignals(False)
        label = self.labels[page - 1] if 0 < page <= len(self.labels) else ""
        self.page_box.setToolTip(f"Printed page {label}" if label and label != str(page) else "")
        self.prev_button.setEnabled(page > 1)
        self.next_button.setEnabled(self.book is not None and page < self.book.page_count)
        self._save_timer.start()
        if self.book is not None:
            self.pageChanged.emit(self.book.id, page)

    def _pdf_page_changed(self, page: int) -> None:
        if page != self.page:
            # scrolling on to the next page is reading; anything else is a jump
            self._page_shown(page, reading=page == self.page + 1)

    def next_page(self) -> None:
        if self.book is not None and self.page < self.book.page_count:
            self.go_to_page(self.page + 1, reading=True)

    def previous_page(self) -> None:
        if self.page > 1:
            self.go_to_page(self.page - 1)

    def save_position(self) -> None:
        if self.book is not None:
            try:
                self.book = self.library.set_page(
                    self.book.id, self.page, reached=self._reached or None
                )
                self._reached = 0
            except MarginError:
                log.info("position not saved: the book is gone")

    def _finished_toggled(self, checked: bool) -> None:
        if self.book is not None:
            self.book = self.library.set_finished(self.book.id, checked)

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
            self.font_size += 1
            self.view.set_font_size(self.font_size)

    def zoom_out(self) -> None:
        from desktop.reader.pdf_view import PdfView
        from desktop.reader.text_view import TextView

        if isinstance(self.view, PdfView):
            self.view.zoom_out()
        elif isinstance(self.view, TextView):
            self.font_size -= 1
            self.view.set_font_size(self.font_size)

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

    # find and contents -------------------------------------------------------------------

    def run_find(self) -> None:
        from core.search import BookSearch

        self.find_results.clear()
        query = self.find_box.text().strip()
        if self.book is None or not query:
            return
        hits = BookSearch(self.library.db).search_book(self.book.id, query, limit=30)
        if not hits:
            self.find_results.addItem(QListWidgetItem(f"Nothing matches “{query}”."))
        for hit in hits:
            snippet = " ".join(hit.snippet.replace("«", "").replace("»", "").split())
            item = QListWidgetItem(f"{self._label(hit.start_page)} — {snippet}")
            item.setData(PAGE_ROLE, (hit.start_page, _mark_phrase(hit.snippet)))
            self.find_results.addItem(item)
        self.side.setCurrentIndex(1)

    def focus_find(self) -> None:
        self.side.setCurrentIndex(1)
        self.find_box.setFocus()
        self.find_box.selectAll()

    def _toc_go(self, item: QTreeWidgetItem, *_: object) -> None:
        page = item.data(0, PAGE_ROLE)
        if page:
            self.go_to_page(int(page))

    def _result_go(self, item: QListWidgetItem) -> None:
        data = item.data(PAGE_ROLE)
        if data:
            page, mark = data
            self.go_to_page(int(page), mark=mark)

    # selection and actions -----------------------------------------------------------------

    def selection(self) -> tuple[int, str, object] | None:
        """(page, text, anchor) of the current selection, if any."""
        from desktop.reader.text_view import TextView

        if isinstance(self.view, TextView):
            text = self.view.selected_text()
            return (self.page, text, None) if text else None
        return self._pending_selection

    def _text_selection_changed(self) -> None:
        from desktop.reader.text_view import TextView

        if not isinstance(self.view, TextView):
            return
        if self.view.selected_text():
            rect = self.view.cursorRect()
            point = self.view.viewport().mapTo(self, QPoint(rect.center().x(), rect.bottom()))
            self.selection_bar.show_at(point)
        else:
            self.selection_bar.hide()

    def _pdf_selected(self, page: int, text: str, polys: object) -> None:
        self._pending_selection = (page, text, {"polys": polys})
        from desktop.reader.pdf_view import PdfView

        if isinstance(self.view, PdfView):
            pos = self.view.canvas.mapFromGlobal(self.cursor().pos())
            point = self.view.canvas.mapTo(self, pos)
            self.selection_bar.show_at(point)

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
        if action == "highlight":
            self.save_highlight(page, text, anchor)
            return True
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
    ) -> None:
        if self.book is None:
            return
        if note is None and self.isVisible() and not self.property("headless"):
            note, ok = QInputDialog.getText(self, "Highlight", "Note (optional):")
            note = note if ok else ""
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

        if isinstance(self.view, PdfView):
            self.view.clear_selection()
        self.go_to_page(self.page)

    def refresh_highlights(self) -> None:
        from desktop.reader.pdf_view import PdfView

        self.highlight_list.clear()
        if self.book is None:
            return
        items = self.library.list_highlights(self.book.id)
        for h in items:
            note = f"\n{h.note}" if h.note else ""
            item = QListWidgetItem(f"{self._label(h.page)} — {h.text[:160]}{note}")
            item.setData(PAGE_ROLE, (h.page, h.text))
            self.highlight_list.addItem(item)
        if isinstance(self.view, PdfView):
            self.view.set_highlights(
                [
                    (h.page, h.colour, (h.anchor or {}).get("polys", []))
                    for h in items
                    if isinstance(h.anchor, dict)
                ]
            )


def _mark_phrase(snippet: str) -> str:
    """The text around the first highlighted match of a snippet, to mark on the page."""
    clean = snippet.replace("…", " ")
    start = clean.find("«")
    plain = clean.replace("«", "").replace("»", "")
    if start < 0:
        return " ".join(plain.split()[:6])
    before = clean[:start].replace("«", "").replace("»", "")
    words = plain[len(before) :].split()
    return " ".join(words[:6])
