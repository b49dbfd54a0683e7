"""PDF pages drawn by QtPdf: continuous scroll, zoom, fit width, text selection with the
mouse, highlights. Pages render in QtPdf's worker threads (``QPdfPageRenderer``), so turning
and zooming never block the window; rendered pages are cached and neighbours pre-rendered."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QRectF, QSize, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPolygonF,
)
from PySide6.QtPdf import QPdfDocument, QPdfDocumentRenderOptions, QPdfPageRenderer
from PySide6.QtWidgets import QScrollArea, QWidget

from core.errors import BookCode, BookError
from desktop.reader.pdf_canvas import GAP, _Pages, poly_points, to_poly
from desktop.reader.reading_keys import claims, reading_move
from desktop.widgets import history_button

__all__ = ["GAP", "PdfView", "poly_points", "to_poly"]
CACHE_PAGES = 16
# …and at most this many bytes of them, but never fewer than CACHE_MIN pages (the pages on
# screen and the three rendered ahead must fit, or they would push each other out): sixteen
# pages of a fitted 117-page PDF held 66 MB after a reader had turned 40 pages
CACHE_BYTES = 24 * 1024 * 1024
CACHE_MIN = 6
PAGE_PIXELS = 12_000_000  # a page is drawn with at most this many pixels (48 MB), then scaled


class PdfView(QScrollArea):
    pageChanged = Signal(int)  # 1-based
    drawn = Signal()
    zoomChanged = Signal(float, bool)  # scale, fit to width
    requestBack = Signal()
    requestForward = Signal()
    chapterEdge = Signal(bool)  # Home (False) / End (True)
    highlightClicked = Signal(int, QPoint, bool)  # id (0: none), where (global), by keys

    def __init__(
        self, path: Path, parent: QWidget | None = None, *, password: str | None = None
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("PDF page view")
        self.document = QPdfDocument(self)
        from core.books.pdf_doc import password_variants

        for variant in password_variants(password):
            if variant:
                self.document.setPassword(variant)  # in memory only, for this view
            error = self.document.load(str(path))
            if error != QPdfDocument.Error.IncorrectPassword:
                break
        if error == QPdfDocument.Error.IncorrectPassword:
            raise BookError(
                BookCode.WRONG_PASSWORD if password else BookCode.PASSWORD,
                f"“{path.name}” is protected by a password"
                + (": the password given is wrong." if password else "."),
                hint="Type its password to open it.",
            )
        if error != QPdfDocument.Error.None_:
            raise BookError(
                BookCode.UNREADABLE,
                f"{path.name} cannot be shown ({error.name}).",
                hint="Check that the file is still where Margin keeps it.",
            )
        self.renderer = QPdfPageRenderer(self)
        self.renderer.setRenderMode(QPdfPageRenderer.RenderMode.MultiThreaded)
        self.renderer.setDocument(self.document)
        self.renderer.pageRendered.connect(self._rendered)
        self.canvas = _Pages(self)
        self.setWidget(self.canvas)
        self.setWidgetResizable(False)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.scale = 1.3  # pixels per PDF point
        self.fit_width = True
        self.rects: list[QRectF] = []
        self.cache: OrderedDict[tuple[int, int], QImage] = OrderedDict()
        self.pending: set[tuple[int, int]] = set()
        self.highlights: dict[int, list[tuple[str, str, list[QPolygonF]]]] = {}
        self.highlight_areas: dict[int, list[tuple[int, list[QPolygonF]]]] = {}  # page → ids
        self.mark: tuple[int, list[QPolygonF]] | None = None
        self.word: tuple[int, list[QPolygonF]] | None = None  # the word read aloud: underlined
        self._raw: tuple[int, str] = (0, "")  # QtPdf's text of the page words were sought on
        self.current = 1
        self._drawn_page = 0
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self._relayout_timer = QTimer(self, singleShot=True, interval=30)
        self._relayout_timer.timeout.connect(self._apply_fit)
        self._layout()

    @property
    def page_count(self) -> int:
        return int(self.document.pageCount())

    def page_size(self, index: int) -> QSizeF:
        """The page's size in points; a page QtPdf cannot measure (a damaged one) is drawn
        blank at A4 size, like a viewer does, and the rest of the book reads normally."""
        size = self.document.pagePointSize(index)
        if size.width() <= 1 or size.height() <= 1:
            return QSizeF(595, 842)
        return size

    def page_label(self, page: int) -> str:
        label = self.document.pageLabel(page - 1)
        return label or str(page)

    # layout and zoom ------------------------------------------------------------------

    def _layout(self) -> None:
        dpr = self.devicePixelRatioF()
        self.rects = []
        y = float(GAP)
        widest = 0.0
        for i in range(self.page_count):
            size = self.page_size(i)
            w, h = size.width() * self.scale, size.height() * self.scale
            widest = max(widest, w)
            self.rects.append(QRectF(0, y, w, h))
            y += h + GAP
        width = widest + 2 * GAP
        for rect in self.rects:
            rect.moveLeft((width - rect.width()) / 2)
        self.canvas.resize(int(width), int(y))
        self._dpr = dpr
        self.canvas.update()

    def _apply_fit(self) -> None:
        if not self.fit_width or not self.page_count:
            return
        widest = max(self.page_size(i).width() for i in range(min(self.page_count, 20)))
        available = self.viewport().width() - 2 * GAP
        if widest > 0 and available > 100:
            self.set_scale(available / widest, keep_fit=True)

    def settle(self) -> None:
        """Apply a pending fit-to-width now (before a screenshot)."""
        if self._relayout_timer.isActive():
            self._relayout_timer.stop()
        self._apply_fit()

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        if self.fit_width:
            self._relayout_timer.start()

    def set_scale(self, scale: float, *, keep_fit: bool = False) -> None:
        # fitting may enlarge a tiny page (a small scan) past the zoom buttons' 6x
        scale = max(0.3, min(scale, 500.0 if keep_fit else 6.0))
        if abs(scale - self.scale) < 0.005:
            return
        page = self.current
        bar = self.verticalScrollBar()
        rect = self.rects[page - 1] if 0 < page <= len(self.rects) else None
        within = (bar.value() - rect.top()) / self.scale if rect is not None else 0.0
        self.scale = scale
        self.fit_width = keep_fit
        self._layout()
        self.go_to_page(page, within * scale)
        self.zoomChanged.emit(self.scale, self.fit_width)

    def zoom_in(self) -> None:
        self.set_scale(self.scale * 1.2)

    def zoom_out(self) -> None:
        self.set_scale(self.scale / 1.2)

    def fit(self) -> None:
        self.fit_width = True
        self._apply_fit()
        self.zoomChanged.emit(self.scale, True)

    # pages ---------------------------------------------------------------------------

    def go_to_page(self, page: int, offset: float = 0) -> None:
        """Show ``page`` with its top (or ``offset`` pixels below it) at the top."""
        page = max(1, min(page, self.page_count))
        if not self.rects:
            return
        self.current = page
        self.verticalScrollBar().setValue(round(self.rects[page - 1].top() - GAP / 2 + offset))
        self._drawn_page = 0
        self.canvas.update()
        self.pageChanged.emit(page)

    def position(self) -> tuple[int, int]:
        """(page, points below its top) at the top of the screen: zoom-independent."""
        index = max(0, min(self.current, len(self.rects)) - 1)
        if not self.rects:
            return (1, 0)
        below = (self.verticalScrollBar().value() - self.rects[index].top() + GAP / 2) / self.scale
        return (index + 1, max(0, round(below)))

    def overlap(self) -> int:
        """About one line of text at this zoom: kept in view when turning a screen."""
        return int(max(16, 14 * self.scale * 1.4))

    def next_screen(self) -> bool:
        bar = self.verticalScrollBar()
        if bar.value() >= bar.maximum():
            return False
        bar.setValue(bar.value() + max(20, self.viewport().height() - self.overlap()))
        return True

    def previous_screen(self) -> bool:
        bar = self.verticalScrollBar()
        if bar.value() <= 0:
            return False
        bar.setValue(bar.value() - max(20, self.viewport().height() - self.overlap()))
        return True

    def show_mark(self) -> None:
        """Scroll so that the marked words are in the middle of the screen."""
        if self.mark is None or not self.mark[1]:
            return
        index, polys = self.mark
        rect = self.rects[index]
        top = min(p.boundingRect().top() for p in polys) * self.scale + rect.top()
        bottom = max(p.boundingRect().bottom() for p in polys) * self.scale + rect.top()
        centre = (top + bottom) / 2
        self.current = index + 1
        self.verticalScrollBar().setValue(int(max(0, centre - self.viewport().height() / 2)))
        self._drawn_page = 0
        self.canvas.update()
        self.pageChanged.emit(index + 1)

    def mark_visible(self) -> bool:
        if self.mark is None or not self.mark[1]:
            return False
        index, polys = self.mark
        rect = self.rects[index]
        top = min(p.boundingRect().top() for p in polys) * self.scale + rect.top()
        value = self.verticalScrollBar().value()
        return value <= top <= value + self.viewport().height() - 10

    def event(self, event: QEvent) -> bool:
        if claims(event):
            event.accept()  # the screen turns here, not in a window shortcut
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        move = reading_move(event)  # the reading keys of every view (reading_keys.py)
        if move in ("next", "previous"):
            self.next_screen() if move == "next" else self.previous_screen()
            return
        if move in ("start", "end"):
            self.chapterEdge.emit(move == "end")
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            hid, where = self.canvas.highlight_for_keys()  # the one selected, or on screen
            if hid:
                self.highlightClicked.emit(hid, self.canvas.mapToGlobal(where.toPoint()), True)
                return
        super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not history_button(self, event):
            super().mousePressEvent(event)

    def _scrolled(self, value: int) -> None:
        probe = value + self.viewport().height() / 3
        for i, rect in enumerate(self.rects):
            if rect.bottom() + GAP >= probe:
                if i + 1 != self.current:
                    self.current = i + 1
                    self.pageChanged.emit(self.current)
                break

    def _key(self, index: int) -> tuple[int, int]:
        return index, self._render_size(index).width()

    def _render_size(self, index: int) -> QSize:
        """The pixels a page is drawn with: its size on screen, within ``PAGE_PIXELS`` (a
        14,400 pt page zoomed in took 1.49 GB, issue 46 item 10; drawn larger, it is
        scaled)."""
        rect = self.rects[index]
        width, height = rect.width() * self._dpr, rect.height() * self._dpr
        area = max(1.0, width * height)
        if area > PAGE_PIXELS:
            shrink = (PAGE_PIXELS / area) ** 0.5
            width, height = width * shrink, height * shrink
        return QSize(max(1, int(width)), max(1, int(height)))

    def image_for(self, index: int) -> QImage | None:
        key = self._key(index)
        image = self.cache.get(key)
        if image is not None:
            self.cache.move_to_end(key)
            self._prefetch(index)
            return image
        self._request(index)
        return None

    def _request(self, index: int) -> None:
        if not 0 <= index < self.page_count:
            return
        key = self._key(index)
        if key in self.cache or key in self.pending:
            return
        self.pending.add(key)
        self.renderer.requestPage(index, self._render_size(index), QPdfDocumentRenderOptions())

    def _prefetch(self, index: int) -> None:
        for neighbour in (index + 1, index + 2, index - 1):
            self._request(neighbour)

    def _rendered(self, page: int, size: QSize, image: QImage, *rest: object) -> None:
        key = (page, size.width())
        self.pending.discard(key)
        if not self.rects or page >= len(self.rects) or key != self._key(page):
            return  # rendered for an old zoom level
        if self.image_filter is not None:
            image = self.image_filter(image)  # night or sepia page
        image.setDevicePixelRatio(self._dpr)
        self.cache[key] = image
        held = sum(i.sizeInBytes() for i in self.cache.values())
        dropped = False
        while len(self.cache) > CACHE_PAGES or (len(self.cache) > CACHE_MIN and held > CACHE_BYTES):
            held -= self.cache.popitem(last=False)[1].sizeInBytes()
            dropped = True
        if dropped:  # pages freed (4 MB each, in QtPdf's threads' heaps): once the reader
            # pauses, give them back to the system (40 pages turned held 8 MB more without)
            from desktop.runtime.gc_policy import give_back_soon

            give_back_soon()
        self.canvas.update(self.rects[page].toAlignedRect())

    image_filter: Callable[[QImage], QImage] | None = None

    def set_image_filter(self, image_filter: Callable[[QImage], QImage] | None) -> None:
        """Pages drawn through ``image_filter`` (the theme's night or sepia page)."""
        self.image_filter = image_filter
        self.cache.clear()
        self.pending.clear()
        self.canvas.update()

    def painted(self) -> None:
        index = self.current - 1
        if (
            0 <= index < len(self.rects)
            and self._key(index) in self.cache
            and self._drawn_page != self.current
        ):
            self._drawn_page = self.current
            self.drawn.emit()

    def is_drawn(self) -> bool:
        return self._drawn_page == self.current

    # highlights and marks -------------------------------------------------------------

    def set_highlights(
        self, items: list[tuple[int, str, list[list[list[float]]], str, int]]
    ) -> None:
        """(page, colour name, polygons, style, id): drawn by ``desktop.highlights.look.
        paint_highlight`` as a background, an underline or a line through, like the text
        view's; a click on one (or Enter) opens its bar (``highlightClicked``)."""
        self.highlights = {}
        self.highlight_areas = {}
        for page, colour, polys, style, hid in items:
            shapes = [to_poly(p) for p in polys]
            self.highlights.setdefault(page, []).append((colour, style, shapes))
            self.highlight_areas.setdefault(page, []).append((hid, shapes))
        self.canvas.update()

    def mark_text(self, page: int, text: str, *, near: int = -1, stored: str = "") -> bool:
        """Mark the words ``text`` on ``page`` exactly — the occurrence that starts at
        ``near`` in the page's stored text ``stored`` when they stand there twice (see
        ``pdf_marks.find_words``); False when they are not on the page."""
        from desktop.reader.pdf_marks import find_words

        selection = self.document.getAllText(page - 1)
        full = selection.text() if selection.isValid() else ""
        place = find_words(full, text, stored, near)
        if place is None:
            self.mark = None
            return False
        found = self.document.getSelectionAtIndex(page - 1, *place)
        self.mark = (page - 1, list(found.bounds())) if found.isValid() else None
        self.canvas.update()
        return self.mark is not None

    def mark_word(self, page: int, word: str, *, near: int = -1, stored: str = "") -> bool:
        """Underline ``word`` (read aloud) on ``page`` — the occurrence at ``near`` in the
        stored text ``stored``; False when it is not found there (nothing underlined)."""
        from desktop.reader.pdf_marks import find_words

        if self._raw[0] != page:
            selection = self.document.getAllText(page - 1)
            self._raw = (page, selection.text() if selection.isValid() else "")
        place = find_words(self._raw[1], word, stored, near) if word.strip() else None
        found = self.document.getSelectionAtIndex(page - 1, *place) if place else None
        self.word = (page - 1, list(found.bounds())) if found and found.isValid() else None
        self.canvas.update()
        return self.word is not None

    def clear_selection(self) -> None:
        self.canvas.selection_polys = []
        self.canvas.selection_page = -1
        self.canvas.update()
