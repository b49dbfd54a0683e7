"""The reader: one open book. This module wires the parts, each in its own module:

- ``view_host.ViewHost`` shows the book (``PdfView`` for PDFs, ``TextView`` for the rest);
- ``toolbar.ReaderToolbar`` and ``footer.Footer`` around it;
- ``side_panels.SidePanels``: Contents, Find, Highlights, and companion panels by name;
- ``selection_actions.SelectionActions``: the selection bar, context menu, quick actions;
- ``core.reading.ReadingSession`` keeps the positions and decides what a move means.

A page turn flows: key press → the view scrolls → ``ViewHost.scrolledTo`` → ``_scrolled``
→ ``_page_shown`` → ``ReadingSession.read_on`` (reading: may raise ``read_to``) or
``moved``/``jump`` (never) → toolbar, contents, footer → saved after ``SAVE_DELAY_MS``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent, QContextMenuEvent
from PySide6.QtWidgets import QListWidgetItem, QSplitter, QTreeWidgetItem, QVBoxLayout, QWidget

from core.errors import MarginError
from core.reading import Pace, Place, ReadingSession, Screen
from core.store.library import BookInfo, Library
from desktop.accessibility import announce
from desktop.events import (
    BookClosed,
    BookOpened,
    BookOpening,
    Events,
    HighlightsChanged,
    PageShown,
    ReadToChanged,
)
from desktop.reader.book_state import ReaderMemory
from desktop.reader.footer import Footer
from desktop.reader.highlight_bar import HighlightActions
from desktop.reader.pages import Chapters, PageLabels
from desktop.reader.selection_actions import SelectionActions
from desktop.reader.shortcuts import install_shortcuts
from desktop.reader.side_panels import SIDE_START, SidePanels
from desktop.reader.toolbar import ReaderToolbar
from desktop.reader.typography import Typography
from desktop.reader.view_host import PageSource, ViewHost

if TYPE_CHECKING:
    from desktop.highlights.mark_views import ReaderViews

log = logging.getLogger("margin.reader")
SAVE_DELAY_MS = 500


class Reader(QWidget):
    requestAsk = Signal(object)  # AskRequest
    pageChanged = Signal(int, int)  # book id, page
    highlightsChanged = Signal(int)  # book id
    fontSizeChanged = Signal(int)  # zoomed with the keys or buttons
    caretBrowsingChanged = Signal(bool)  # F7 pressed in the page

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.events = Events()  # what happens to the book: the modules below follow it
        self.book: BookInfo | None = None
        self.session: ReadingSession | None = None  # the open book's positions and rules
        self.labels = PageLabels()
        self.theme = "light"
        self.memory = ReaderMemory(library)  # per book in the library, habits in reader.ini
        self.settings = self.memory.ini
        self.settings.reading_states = self.memory.states  # type: ignore[attr-defined]
        self.typography = Typography()  # the window gives the saved look (settings.toml) at once
        self.font_size = self.typography.font_size
        self._pace = Pace(self.memory.seconds_per_page())
        self.chapters = Chapters()
        self._jumping = False
        self.toolbar = ReaderToolbar()  # the window hides it in focus mode
        self.side = SidePanels(self.events, library, self)
        self.host = ViewHost()
        self.footer = Footer(self.events, self)
        self.split = QSplitter()  # the side panel beside the page and its footer
        self.split.addWidget(self.side.column)  # the panel under its tabs
        self.split.addWidget(_column(self.host, self.footer))
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([SIDE_START, 700])
        _column(self.toolbar, self.split, into=self)
        self.selection_actions = SelectionActions(
            self, self.host, self, library, self.events, self.requestAsk.emit
        )
        self.selection_bar = self.selection_actions.bar
        self.highlight_actions = HighlightActions(self, self.host)
        self._save_timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_position)
        self._aliases()
        self._wire()
        self.reader_actions = install_shortcuts(self)
        self._set_enabled(False)

    def _aliases(self) -> None:
        """The parts' widgets under the names the window and the tests know."""
        bar, side = self.toolbar, self.side
        self.back_button, self.forward_button = bar.back_button, bar.forward_button
        self.prev_button, self.next_button = bar.prev_button, bar.next_button
        self.page_box, self.page_total = bar.page_box, bar.page_total
        self.zoom_in_button, self.zoom_out_button = bar.zoom_in_button, bar.zoom_out_button
        self.fit_button, self.read_to_button = bar.fit_button, bar.read_to_button
        self.theme_box, self.finished_box = bar.theme_box, bar.finished_box
        self.toc, self.toc_empty = side.contents.tree, side.contents.empty
        self.toc_stack = side.contents
        self.find_box, self.find_results = side.finder.box, side.finder.results
        self.find_count = side.finder.count
        self.whole_word_box, self.exact_box = side.finder.whole_word_box, side.finder.exact_box
        self.highlight_list = side.highlights
        # the parts' calls the window and the tests use, under their old names
        acts = self.selection_actions
        self.selection, self.build_context_menu = acts.selection, acts.build_context_menu
        self.ask_about_selection, self.save_highlight = acts.act, acts.save_highlight
        self.run_find, self.focus_find = side.finder.run, side.focus_find
        self.fit_width = self.host.fit_width
        self.wait_drawn = self.host.wait_drawn  # until the page is painted (PDF: threads)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self.build_context_menu().exec(event.globalPos())

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_timer.stop()  # the window saves on closing; a closed reader writes nothing
        super().closeEvent(event)

    def _wire(self) -> None:
        """The one place the reader's parts are connected."""
        bar, side, host, events = self.toolbar, self.side, self.host, self.events
        # the page shows the highlights the Highlights panel has just read
        marks = lambda _e: host.set_highlights(side.highlights.highlights)  # noqa: E731
        events.subscribe(BookOpening, marks)
        events.subscribe(HighlightsChanged, marks)
        # the reader's signals, for the window and the tests that wait on them
        events.subscribe(PageShown, lambda e: self.pageChanged.emit(e.book_id, e.page))
        events.subscribe(HighlightsChanged, lambda e: self.highlightsChanged.emit(e.book_id))
        bar.back_button.clicked.connect(self.go_back)
        bar.forward_button.clicked.connect(self.go_forward)
        bar.prev_button.clicked.connect(self.previous_page)
        bar.next_button.clicked.connect(self.next_page)
        bar.page_box.valueChanged.connect(
            lambda v: self.go_to_page(v) if self.book and v != self.page else None
        )
        bar.zoom_in_button.clicked.connect(self.zoom_in)
        bar.zoom_out_button.clicked.connect(self.zoom_out)
        bar.fit_button.clicked.connect(self.fit_width)
        bar.read_to_button.clicked.connect(self.mark_read_to_here)
        bar.theme_box.currentTextChanged.connect(self.set_theme)
        bar.finished_box.toggled.connect(self._finished_toggled)
        side.contents.requestPage.connect(self.go_to_page)
        side.finder.requestMatch.connect(
            lambda page, text, near: self.go_to_page(page, mark=text, near=near)
        )
        side.highlights.requestPlace.connect(
            lambda page, text, at: self.go_to_page(page, mark=text, at=at)
        )
        side.highlights.attach(self)  # it edits, copies and exports through the reader
        for panel in (side.contents, side.finder, side.highlights):
            panel.requestFocusBook.connect(self.focus_book)
        host.scrolledTo.connect(self._scrolled)
        host.requestBack.connect(self.go_back)
        host.requestForward.connect(self.go_forward)
        host.chapterEdge.connect(self.chapter_edge)
        host.zoomChanged.connect(lambda s, fit: self._remember(zoom=None if fit else round(s, 3)))
        host.imageOpened.connect(lambda url: self.host.show_image(url, self))
        host.pageLinkOpened.connect(lambda page: self.go_to_page(page))
        host.caretBrowsingChanged.connect(self._caret_toggled)
        side.currentChanged.connect(lambda: self._remember(side=self.side.current_name()))

    def _set_enabled(self, enabled: bool) -> None:
        self.toolbar.set_enabled(enabled)
        self._history_buttons()

    def _history_buttons(self) -> None:
        h = self.session.history if self.session is not None else None
        self.toolbar.set_history(bool(h and h.can_back()), bool(h and h.can_forward()))

    @property
    def page(self) -> int:
        """The page on screen (1 when no book is open)."""
        return self.session.page if self.session is not None else 1

    @property
    def view(self) -> QWidget | None:  # the text or PDF view on screen
        return self.host.view

    @property
    def views(self) -> ReaderViews:  # the one door to the book's views (mark_views.py)
        return self.host

    @property
    def page_area(self) -> QWidget:  # where the book's view sits (the tab order)
        return self.host

    def stop_decoders(self) -> None:
        """Picture decoders stop before the window goes (issue 46)."""
        if (pictures := self.host.picture_view()) is not None:
            pictures.shutdown()

    # opening --------------------------------------------------------------------------

    def open_book(self, book: BookInfo, page: int | None = None) -> None:
        """Show ``book`` at ``page`` (its saved position when None)."""
        self.save_position()
        self.close_book(reopening=True)
        self._pace = Pace(self._pace.seconds_per_page() if self._pace.measured() else None)
        self.labels = PageLabels(self.library.page_labels(book.id))
        self.chapters = Chapters(self.memory.states.page_chapters(book.id))
        state = self.memory.book(book.id)
        view = self.host.open(
            PageSource(self.library, book),
            theme=self.theme,
            typography=replace(self.typography, font_size=self.font_size),
            zoom=state.zoom,
        )
        # the focus first: a screen reader lagging behind took the caret's moves as the focus
        # arriving, silently, and never said "Book page" (Orca 43 at load 14)
        view.setFocus()
        pictures = self.host.picture_view()
        if pictures is not None:  # direction, fit and spreads of a comic, kept per book
            pictures.apply_settings(state.view.get("pictures", {}))
            pictures.settingsChanged.connect(lambda v, b=book.id: self._view_settings(b, v))
            pictures.settingsChanged.connect(
                lambda v: self.toolbar.set_right_to_left(bool(v.get("rtl")))
            )
        self.book = book
        self.session = ReadingSession.open(self.library, book, pace=self._pace)
        self.toolbar.set_book(book, pdf=book.format == "pdf")
        self.toolbar.set_right_to_left(self.host.right_to_left())
        self.events.publish(BookOpening(book, self.labels))  # lists fill, marks drawn
        self._set_enabled(True)
        self.library.mark_opened(book.id)
        offset = 0
        if page is None and state.place is not None and state.place[0] == book.page:
            offset = state.place[1]  # reopening: the same words at the top as when it was left
        if page is not None:
            self.session.jump(page)  # opened at another page than where it was left
        self.go_to_page(page or book.page or 1, remember=False, offset=offset)
        if state.side:
            self.side.show_panel(state.side)
        self.events.publish(BookOpened(book.id))
        view.setFocus()

    def _view_settings(self, book_id: int, values: dict[str, object]) -> None:
        self.memory.remember(book_id, view={**self.memory.book(book_id).view, "pictures": values})

    def close_book(self, *, reopening: bool = False) -> None:
        """Close the book (``reopening``: a book, maybe this one read anew, opens at once)."""
        self._save_timer.stop()
        self.host.close_view()
        closed = self.book.id if self.book is not None else 0
        self.book = None
        self.session = None
        self.selection_bar.hide()
        self.events.publish(BookClosed(closed, reopening))
        self._set_enabled(False)

    def current_chapter(self) -> QTreeWidgetItem | None:
        """The contents entry the current page belongs to."""
        return self.side.contents.chapter_at(self.page)

    def page_texts(self) -> list[tuple[int, str]]:
        """Every stored page's text, read once per book."""
        assert self.host.pages is not None
        return self.host.pages.texts()

    # navigation ------------------------------------------------------------------------

    def position(self) -> tuple[int, int]:
        """(page, offset) of what is on screen now: where Back returns to."""
        return self.host.position(self.page)

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
        anything else is a jump the session remembers for Back. ``mark`` is marked where it
        really is (it may start on the page before or run on to the next) and scrolled into
        view; ``near`` is its offset in the stored page text, ``at`` its offset in the page as
        the text view lays it out (highlight anchors)."""
        if self.book is None or self.session is None:
            return
        page = max(1, min(int(page), max(1, self.book.page_count)))
        if remember and not reading and self.view is not None and not self._jumping:
            # one push per user action: a caller that jumps twice in a row (to the page, then
            # to the mark on it) must not leave the half-way place in the history
            self.session.history.push(Place(*self.position()))
            self._history_buttons()
            self._jumping = True
            QTimer.singleShot(0, lambda: setattr(self, "_jumping", False))
        self.selection_bar.hide()
        shown = self.host.show_page(page, mark=mark, offset=offset, near=near, at=at)
        if remember and not reading:
            self.session.jump(shown)  # where it landed: the session judges reading on from it
        self._page_shown(shown, reading=reading)

    def _scrolled(self, page: int, _most: int = 0) -> None:
        """The reader scrolled or turned the view to ``page``: forward is reading on, as far
        as the session's rule says (``core.reading``)."""
        if page != self.page:
            self._page_shown(page, reading=page > self.page)

    def _page_shown(self, page: int, *, reading: bool = False) -> None:
        """The view shows ``page``: the session decides what the move means, from the first
        and last pages on screen."""
        if self.session is None or self.book is None:
            return
        read_to = self.session.read_to
        screen = Screen(*self.host.screen_pages(page))
        if screen.first != page:
            screen = Screen(page, max(page, screen.last))
        if reading:
            self.session.read_on(screen)
        else:
            self.session.moved(page, screen)
        self.toolbar.show_page(page, self.book.page_count, self.labels.printed(page))
        self._save_timer.start()
        self.events.publish(PageShown(self.book.id, page, reading))  # contents, footer, …
        if self.session.read_to != read_to:
            self._read_to_changed()

    def next_page(self) -> None:
        if self.book is not None and self.page < self.book.page_count:
            self.go_to_page(self.page + 1, reading=True)

    def previous_page(self) -> None:
        if self.page > 1:
            self.go_to_page(self.page - 1, remember=False)

    def page_towards(self, side: str) -> None:
        """A page to the ``side`` ("left" or "right"): forward to the left in a book whose
        pages turn right to left (Ctrl+Left, Ctrl+Right)."""
        if (side == "left") == self.toolbar.rtl:
            self.next_page()
        else:
            self.previous_page()

    def chapter_edge(self, end: bool) -> None:
        """Home / End: the start or the end of the current chapter (of the book when its
        chapters are unknown): a jump."""
        if self.book is None:
            return
        pages = self.chapters.pages_with(self.page) or list(range(1, self.book.page_count + 1))
        if pages:
            self.go_to_page(pages[-1] if end else pages[0])
            if end:
                self.host.show_end_of(pages[-1])

    def can_go_back(self) -> bool:
        return self.session is not None and self.session.history.can_back()

    def go_back(self) -> None:
        """Back to where the reader was before the jump (where reading stopped)."""
        self._through_history(back=True)

    def go_forward(self) -> None:
        self._through_history(back=False)

    def _through_history(self, *, back: bool) -> None:
        if self.session is None:
            return
        here = Place(*self.position())
        target = self.session.back(here) if back else self.session.forward(here)
        if target is not None:
            self.go_to_page(target.page, offset=target.offset, remember=False)
        self._history_buttons()

    def read_bound(self) -> int | None:
        """The last page read (Find folds what comes after it); None when all is read."""
        if self.book is None or self.session is None or self.book.finished:
            return None
        return self.session.read_to

    def mark_read_to_here(self) -> None:
        """ "Read to here": the spoiler bound becomes the page on screen, on purpose."""
        if self.session is None:
            return
        self.session.read_to_here()
        self.save_position()
        self._read_to_changed()
        page = self.labels.short(self.session.read_to)
        announce(self, f"Read to here: the assistant now reads up to p. {page}.")

    def save_position(self) -> None:
        self._save_timer.stop()  # saved now: nothing pending writes later
        if self.book is None or self.session is None:
            return
        try:
            self.book = self.session.save(self.library)
        except MarginError:
            log.info("position not saved: the book is gone")
        here, within = self.position()
        if here == self.page:
            self.memory.remember(self.book.id, place=(here, within))
        if self.session.pace.measured():
            self.memory.set_seconds_per_page(self.session.pace.seconds_per_page())

    def _finished_toggled(self, checked: bool) -> None:
        if self.book is not None and self.session is not None:
            self.book = self.library.set_finished(self.book.id, checked)
            self.session.set_finished(checked)
            self._read_to_changed()

    def _read_to_changed(self) -> None:
        if self.book is not None and self.session is not None:
            s = self.session
            self.events.publish(ReadToChanged(self.book.id, s.read_to, s.finished))

    def zoom_in(self) -> None:
        """A PDF's scale, or a text's font size (remembered for every book)."""
        if not self.host.zoom(1) and self.view is not None:
            self.set_font_size(self.font_size + 1)

    def zoom_out(self) -> None:
        if not self.host.zoom(-1) and self.view is not None:
            self.set_font_size(self.font_size - 1)

    def set_font_size(self, size: int) -> None:
        self.font_size = max(8, min(size, 40))  # the window saves it, in settings.toml only
        self.typography = replace(self.typography, font_size=self.font_size)
        self.host.set_font_size(self.font_size)
        self.fontSizeChanged.emit(self.font_size)

    def set_typography(self, typography: Typography) -> None:
        """The look of reflowable books (font, spacing, measure), applied live."""
        self.typography = typography
        self.font_size = max(8, min(typography.font_size, 40))
        self.host.set_typography(typography)

    def _caret_toggled(self, on: bool) -> None:
        self.typography = replace(self.typography, caret_browsing=on)
        announce(self, "Caret browsing on." if on else "Caret browsing off.")
        self.caretBrowsingChanged.emit(on)

    def set_caret_browsing(self, on: bool) -> None:
        """Caret browsing on or off, without laying the book out again."""
        if on != self.typography.caret_browsing:
            announce(self, "Caret browsing on." if on else "Caret browsing off.")
        self.typography = replace(self.typography, caret_browsing=on)
        self.host.set_caret_browsing(on)

    def set_theme(self, name: str) -> None:
        self.theme = name
        if self.theme_box.currentText() != name:
            self.theme_box.setCurrentText(name)
        self.host.set_theme(name)

    def _remember(self, **changes: object) -> None:
        """Keep something about the open book with it (zoom, side panel)."""
        if self.book is not None:
            self.memory.remember(self.book.id, **changes)

    def focus_book(self) -> None:
        """After a click in a side list, the keys (Page Down, Space) read the book again."""
        if self.view is not None:
            self.view.setFocus()

    def _result_go(self, item: QListWidgetItem) -> None:
        """A Find result or a highlight was chosen in its list."""
        if item.listWidget() is self.side.highlights.list:
            self.side.highlights.go_item(item)
        else:
            self.side.finder.go_item(item)

    def refresh_highlights(self) -> None:
        """A highlight was added or changed: the panels, the page and the window follow."""
        if self.book is not None:
            self.events.publish(HighlightsChanged(self.book.id))


def _column(top: QWidget, bottom: QWidget, into: QWidget | None = None) -> QWidget:
    """``top`` over ``bottom`` (the one that takes the height left), edge to edge."""
    widget = into or QWidget()
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(0, 0, 0, 0)
    if into is None:
        layout.setSpacing(0)
    layout.addWidget(top, 0 if into else 1)
    layout.addWidget(bottom, 1 if into else 0)
    return widget
