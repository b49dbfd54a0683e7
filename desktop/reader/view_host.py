"""The view host: shows the open book with the view its format needs — ``PdfView`` for PDFs,
``TextView`` (one continuous flow of stored pages) for everything else — and gives the reader
one set of calls and signals whatever the view. It draws and reports; the reading session
(``core.reading``) decides what a move means."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import shiboken6
from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from core.books.model import PageContent
from core.errors import MarginError
from core.store.library import BookInfo, HighlightRecord, Library
from desktop.reader.typography import Typography

if TYPE_CHECKING:
    from desktop.reader.image_pages import ImagePagesView
    from desktop.reader.pdf_view import PdfView
    from desktop.reader.text_view import TextView


class PageSource:
    """A book's stored pages for the text view, read in small batches (one query for several
    pages: a screen turn must stay well under a frame)."""

    LIMIT = 200

    def __init__(self, library: Library, book: BookInfo) -> None:
        self.library, self.book = library, book
        self._cache: dict[int, PageContent] = {}
        self._texts: list[tuple[int, str]] | None = None

    def texts(self) -> list[tuple[int, str]]:
        """Every stored page's number and text, read once (Find reads the whole book)."""
        if self._texts is None:
            self._texts = self.library.page_texts(self.book.id)
        return self._texts

    def stored_text(self, page: int) -> str:
        if self._texts is not None and 0 < page <= len(self._texts):
            return self._texts[page - 1][1]
        return self.library.page(self.book.id, page).text

    def __call__(self, number: int) -> PageContent:
        cached = self._cache.get(number)
        if cached is not None:
            return cached
        count = max(1, self.book.page_count)
        first, last = max(1, number - 4), min(count, number + 8)
        if not first <= number <= last:
            return self.library.page(self.book.id, number)  # raises a clear BookError
        if len(self._cache) > self.LIMIT:
            self._cache.clear()
        for content in self.library.pages(self.book.id, first, last):
            self._cache[content.number] = PageContent(
                content.number,
                content.label or str(content.number),
                content.text or "",
                content.html,
                content.chapter,
            )
        found = self._cache.get(number)
        if found is None:
            return self.library.page(self.book.id, number)  # raises a clear BookError
        return found


class ViewHost(QStackedWidget):
    scrolledTo = Signal(int, int)  # the page at the top moved by the reader; most pages of reading
    requestBack = Signal()
    requestForward = Signal()
    chapterEdge = Signal(bool)  # Home (False) / End (True)
    textSelectionChanged = Signal()
    pdfSelected = Signal(int, str, object)  # page, text, polygons
    selectionCleared = Signal()
    contextMenuAt = Signal(QPoint)  # global position
    zoomChanged = Signal(float, bool)  # PDF scale, fit to width
    imageOpened = Signal(str)
    pageLinkOpened = Signal(int)  # a note reference or its back link was clicked
    caretBrowsingChanged = Signal(bool)  # F7 pressed in a text view
    highlightClicked = Signal(
        int, QPoint, bool
    )  # a highlight's id (0: text), where (global), by keys

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placeholder = QLabel("Open a book from the library, or drag a file here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.addWidget(self.placeholder)
        self.view: QWidget | None = None
        self.pages: PageSource | None = None
        self._drawn_event: asyncio.Event | None = None

    # opening ----------------------------------------------------------------------------

    def open(
        self,
        pages: PageSource,
        *,
        theme: str,
        typography: Typography,
        zoom: float | None,
    ) -> QWidget:
        """Show ``book``; ``zoom`` is a PDF's remembered scale (None: fit the width)."""
        self.close_view()
        book = pages.book
        path = Path(book.file_path) if book.file_path else None
        view: QWidget
        from desktop.reader.image_pages import picture_pages

        if book.format == "pdf":
            if path is None or not path.exists():
                raise MarginError(
                    "missing_file",
                    f'The file of "{book.title}" is missing from the library folder.',
                    hint="Remove the book and add it again.",
                )
            view = self._pdf(path, theme, zoom, book.sha256)
        elif path is not None and (found := picture_pages(pages.library, book)) is not None:
            view = self._pictures(path, found, theme)  # comics: desktop/reader/image_pages.py
        else:
            view = self._text(path, pages, theme, typography)
        self.view, self.pages = view, pages
        self.addWidget(view)
        self.setCurrentWidget(view)
        return view

    def _pdf(self, path: Path, theme: str, zoom: float | None, sha256: str = "") -> PdfView:
        from desktop.reader.password_dialog import known
        from desktop.reader.pdf_view import PdfView
        from desktop.theme import page_image_filter

        pdf = PdfView(path, password=known(sha256))
        pdf.image_filter = page_image_filter(theme)
        if zoom is not None:
            pdf.scale = max(0.3, min(zoom, 6.0))
            pdf.fit_width = False
            pdf._layout()
        pdf.pageChanged.connect(lambda page: self.scrolledTo.emit(page, 1))
        pdf.drawn.connect(self.view_drawn)
        pdf.zoomChanged.connect(self.zoomChanged)
        pdf.requestBack.connect(self.requestBack)
        pdf.chapterEdge.connect(self.chapterEdge)
        pdf.requestForward.connect(self.requestForward)
        pdf.canvas.selectionFinished.connect(self.pdfSelected)
        pdf.highlightClicked.connect(self.highlightClicked)  # highlight_bar.py opens its bar
        pdf.canvas.selectionCleared.connect(self.selectionCleared)
        pdf.canvas.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        pdf.canvas.customContextMenuRequested.connect(
            lambda pos: self.contextMenuAt.emit(pdf.canvas.mapToGlobal(pos))
        )
        return pdf

    def _pictures(
        self, path: Path, found: tuple[list[str], bool, list[str]], theme: str
    ) -> ImagePagesView:
        from desktop.reader.image_pages import ImagePagesView

        view = ImagePagesView(path, found[0], rtl=found[1], sides=found[2])
        view.set_theme(theme)
        view.pageChanged.connect(lambda page: self.scrolledTo.emit(page, len(view.spread())))
        view.drawn.connect(self.view_drawn)
        view.requestBack.connect(self.requestBack)
        view.requestForward.connect(self.requestForward)
        return view

    def _text(self, path: Path | None, pages: PageSource, theme: str, typo: Typography) -> TextView:
        from desktop.reader.text_view import TextView

        text_view = TextView(path, pages.book.format)
        from core.books.progression import page_progression

        book = pages.book
        text_view.pager.rtl = page_progression(path, book.format, book.language) == "rtl"
        text_view.font_size = typo.font_size
        text_view.typography = typo
        text_view.set_theme(theme)
        text_view.flow.set_source(pages, pages.book.page_count)
        text_view.selectionChanged.connect(self.textSelectionChanged)
        text_view.topPageChanged.connect(
            lambda page, by_reader: (
                self.scrolledTo.emit(page, text_view.pager.turn_most) if by_reader else None
            )
        )
        text_view.chapterEdge.connect(self.chapterEdge)
        text_view.requestBack.connect(self.requestBack)
        text_view.requestForward.connect(self.requestForward)
        text_view.imageOpened.connect(self.imageOpened)
        text_view.pageLinkOpened.connect(self.pageLinkOpened)
        text_view.caretBrowsingChanged.connect(self.caretBrowsingChanged)
        text_view.highlightClicked.connect(
            lambda hid, at, keys: self.highlightClicked.emit(
                hid, text_view.viewport().mapToGlobal(at), keys
            )
        )
        text_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        text_view.customContextMenuRequested.connect(
            lambda pos: self.contextMenuAt.emit(text_view.viewport().mapToGlobal(pos))
        )
        return text_view

    def close_view(self) -> None:
        if (pictures := self.picture_view()) is not None:
            pictures.shutdown()  # stop decoding, close the book file
        if self.view is not None:
            self.removeWidget(self.view)
            self.view.deleteLater()
            self.view = None
        self.pages = None
        self.setCurrentWidget(self.placeholder)

    def text_view(self) -> TextView | None:
        return cast("TextView | None", self._view_of("desktop.reader.text_view", "TextView"))

    def pdf_view(self) -> PdfView | None:
        return cast("PdfView | None", self._view_of("desktop.reader.pdf_view", "PdfView"))

    def right_to_left(self) -> bool:
        """The open book's pages turn right to left (a right-to-left text, a manga)."""
        text, pictures = self.text_view(), self.picture_view()
        if text is not None:
            return text.pager.rtl
        return bool(pictures is not None and pictures.rtl)

    def picture_view(self) -> ImagePagesView | None:
        view = self._view_of("desktop.reader.image_pages", "ImagePagesView")
        return cast("ImagePagesView | None", view)

    def _view_of(self, module: str, name: str) -> QWidget | None:
        """The open view if it is a ``module.name``. A view's module is imported when a book
        needs it: if it is not loaded, the view is not one (asking must not load QtPdf and
        the PDF view, 2.4 MB, into a window that shows an EPUB)."""
        loaded = sys.modules.get(module)
        if self.view is None or loaded is None:
            return None
        return self.view if isinstance(self.view, getattr(loaded, name)) else None

    # places -----------------------------------------------------------------------------

    def position(self, page: int) -> tuple[int, int]:
        """(page, offset) of what is on screen now (``page`` when nothing is laid out)."""
        text, pdf = self.text_view(), self.pdf_view()
        if text is not None and text.flow.loaded:
            return text.top_position()
        if pdf is not None:
            return pdf.position()
        pictures = self.picture_view()
        if pictures is not None:
            return pictures.position()
        return (page, 0)

    def screen_pages(self, page: int) -> tuple[int, int]:
        """The first and last stored pages on screen (``page`` when nothing is laid out): the
        reading rule (``core.reading``) counts a screen turned past as read to its last line."""
        text, pdf = self.text_view(), self.pdf_view()
        if self.view is None or not self.view.isVisible():
            return (page, page)  # not laid out on a screen: nothing more is seen
        if text is not None and text.flow.loaded:
            if text.pager.showing():
                first, last = text.pager.screen_pages()
            else:
                start, end = text.visible_range()
                first, last = text.flow.page_offset(start)[0], text.flow.page_offset(end)[0]
            return (first or page, max(first or page, last))
        if pdf is not None and pdf.rects:
            bottom = pdf.verticalScrollBar().value() + pdf.viewport().height()
            seen = [i + 1 for i, rect in enumerate(pdf.rects) if rect.top() < bottom]
            return (page, max(page, seen[-1] if seen else page))
        pictures = self.picture_view()
        if pictures is not None:
            spread = pictures.spread() or [page]
            return (page, max(page, *spread))
        return (page, page)

    def show_page(
        self,
        page: int,
        *,
        mark: str = "",
        offset: int = 0,
        near: int = 0,
        at: int = -1,
    ) -> int:
        """Show ``page`` (see ``Reader.go_to_page``); returns the page really shown (a mark
        may start on the next one)."""
        if self._drawn_event is not None:
            self._drawn_event.clear()
        shown = page
        page_count = self.pages.book.page_count if self.pages is not None else page
        pdf, text = self.pdf_view(), self.text_view()
        if pdf is not None:
            if mark:
                stored = self.pages.stored_text(page) if self.pages is not None else ""
                found = pdf.mark_text(page, mark, near=near, stored=stored)
                if not found and page < page_count and pdf.mark_text(page + 1, mark):
                    shown = page + 1
                if pdf.mark is not None:
                    pdf.show_mark()
                else:
                    pdf.go_to_page(page)
            else:
                pdf.mark = None
                pdf.go_to_page(page, offset * pdf.scale)
        elif text is not None:
            position = at
            if mark and near and self.pages is not None:
                # stored text separates paragraphs with a blank line, the view with one break
                stored = self.pages.stored_text(page)
                position = max(0, near - 1 - stored[: near - 1].count("\n\n"))
            if text.show_at(page, offset, mark=mark, near=position):
                shown = text.marks.marked_page()
            self.view_drawn()
        elif (pictures := self.picture_view()) is not None:
            pictures.go_to_page(page, offset)
        return shown

    def next_screen(self) -> bool:
        view = self.view
        return (
            bool(view.next_screen()) if view is not None and hasattr(view, "next_screen") else False
        )

    def previous_screen(self) -> bool:
        view = self.view
        if view is not None and hasattr(view, "previous_screen"):
            return bool(view.previous_screen())
        return False

    def show_end_of(self, page: int) -> None:
        text = self.text_view()
        if text is not None:
            text.show_end_of(page)

    # look -------------------------------------------------------------------------------

    def zoom(self, step: int) -> bool:
        """Zoom a PDF in (1) or out (-1); False when the view zooms by font size instead."""
        pdf = self.pdf_view()
        if pdf is None:
            pictures = self.picture_view()
            if pictures is not None:  # picture pages: in to the width, out to the whole page
                pictures.set_fit("width" if step > 0 else "page")
            return pictures is not None
        pdf.zoom_in() if step > 0 else pdf.zoom_out()
        return True

    def fit_width(self) -> None:
        pdf, pictures = self.pdf_view(), self.picture_view()
        if pdf is not None:
            pdf.fit()
        elif pictures is not None:
            pictures.set_fit("width")

    def set_theme(self, name: str) -> None:
        text, pdf = self.text_view(), self.pdf_view()
        if text is not None:
            text.set_theme(name)
        elif pdf is not None:
            from desktop.theme import page_image_filter

            pdf.set_image_filter(page_image_filter(name))
        elif (pictures := self.picture_view()) is not None:
            pictures.set_theme(name)

    def set_font_size(self, size: int) -> None:
        text = self.text_view()
        if text is not None:
            text.set_font_size(size)

    def set_typography(self, typography: Typography) -> None:
        text = self.text_view()
        if text is not None:
            text.set_typography(typography)

    def set_caret_browsing(self, on: bool) -> None:
        text = self.text_view()
        if text is not None and text.caret_browsing != on:
            text.typography = replace(text.typography, caret_browsing=on)
            text.caret.set_browsing(on)

    def show_image(self, url: str, parent: QWidget) -> None:
        from desktop.reader.image_viewer import show_image

        text = self.text_view()
        if text is not None:
            show_image(parent, text, url)

    def set_highlights(self, items: list[HighlightRecord]) -> None:
        """Draw the book's highlights over the page (their polygons on a PDF, their anchored
        spans in the flow of a text)."""
        pdf, text = self.pdf_view(), self.text_view()
        if pdf is not None:
            pdf.set_highlights(
                [
                    (h.page, h.colour, (h.anchor or {}).get("polys", []), h.style, h.id)
                    for h in items
                    if isinstance(h.anchor, dict)
                ]
            )
        elif text is not None:
            from desktop.reader.text_view import Span

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
                spans.append(Span(h.page, h.text, h.colour, start, end, h.style, h.id))
            text.marks.set_spans(spans)

    def clear_selection(self) -> None:
        pdf, text = self.pdf_view(), self.text_view()
        if pdf is not None:
            pdf.clear_selection()
        elif text is not None:
            cursor = text.textCursor()
            cursor.clearSelection()
            text.setTextCursor(cursor)

    # drawing ----------------------------------------------------------------------------

    def view_drawn(self) -> None:
        if self._drawn_event is not None:
            self._drawn_event.set()

    async def wait_drawn(self, limit: float = 10.0) -> None:
        """Wait until the current page is painted (PDF pages render in threads)."""
        if self._drawn_event is None:
            self._drawn_event = asyncio.Event()
        if self.pdf_view() is not None:
            # a turn of the loop lets the splitter settle the final width (never
            # processEvents() here: qasync then stepped another task waiting on this one's
            # drawing inside it, lost it, and the window never closed: the bundle's smoke
            # test hung under Xvfb)
            await asyncio.sleep(0.02)
        if not shiboken6.isValid(self):
            return  # the window closed meanwhile
        pdf = self.pdf_view()  # again: the book may have been closed meanwhile
        if pdf is not None and shiboken6.isValid(pdf):
            pdf.settle()
            if pdf.is_drawn():
                await asyncio.sleep(0.05)
                return
            pdf.canvas.update()
            async with asyncio.timeout(limit):
                await self._drawn_event.wait()
        await asyncio.sleep(0.05)  # let the last paint reach the screen
