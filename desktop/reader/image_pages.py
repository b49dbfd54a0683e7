"""Picture pages (comics, pre-paginated and image-only EPUBs): one page, or two side by side
when the view is wide (a spread), fitted to the page or to the width, turned by keys and
clicks in the book's direction (right to left for manga). Pictures are read from the book
file and decoded at screen size on worker threads (``QImageReader``), so turning never waits
on decoding in the window's thread; a few pages around the current one are kept."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QEvent,
    QObject,
    QRectF,
    QRunnable,
    QSize,
    Qt,
    QThreadPool,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QImage,
    QImageReader,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import QMenu, QScrollArea, QWidget

from core.errors import MarginError
from desktop.reader.reading_keys import claims, reading_move
from desktop.widgets import history_button

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from core.store.library import BookInfo, Library

CACHE = 10  # decoded pages kept (each at screen size: a few MB)
# Decoding budget (issue 46 item 10: twelve 7,900-pixel pictures took 615 MB): a picture over
# BIG_PIXELS decodes one at a time (a PNG decodes whole before it is scaled); one over
# DECODE_PIXELS is decoded only when its format scales while decoding (JPEG)
BIG_PIXELS = 16_000_000
DECODE_PIXELS = 64_000_000
_BIG = threading.Semaphore(1)
GAP = 6
BACKGROUNDS = {"dark": "#1e1e1e", "sepia": "#e9dfc7", "light": "#d9d9d9"}


class _Decoded(QObject):
    done = Signal(int, object, QImage)  # page index, key, image


class _Decode(QRunnable):
    def __init__(self, view: ImagePagesView, index: int, key: object, box: QSize) -> None:
        super().__init__()
        self.view, self.index, self.key, self.box = view, index, key, box
        self.signals = view._decoded

    def run(self) -> None:
        stopped = self.view.stopped
        if stopped.is_set():
            return  # the view is going: nothing more is decoded
        image = decode_page(self.view.read_image(self.index), self.box, stopped)
        if not stopped.is_set():
            self.signals.done.emit(self.index, self.key, image)


def decode_page(data: bytes | None, box: QSize, stopped: threading.Event) -> QImage:
    """A page's picture at ``box``'s width at most (empty when there is none, or when it is
    too large to decode within the budget); any thread."""
    image = QImage()
    if not data:
        return image
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QBuffer.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    size = reader.size()
    pixels = size.width() * size.height() if size.isValid() else 0
    if size.isValid() and box.width() > 0 and size.width() > box.width():
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    kind = str(reader.format().toStdString()).lower()
    if pixels > DECODE_PIXELS and kind not in ("jpeg", "jpg"):
        pass  # too large to decode within the budget (issue 46 item 10): left empty
    elif pixels > BIG_PIXELS:
        with _BIG:  # one large picture decoded at a time: their peaks never add up
            if not stopped.is_set():
                image = reader.read()
    else:
        image = reader.read()
    return image


class _Canvas(QWidget):
    def __init__(self, view: ImagePagesView) -> None:
        super().__init__()
        self.view = view

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.fillRect(event.rect(), QColor(self.view.background))
        for index, rect in self.view.placed():
            image = self.view.image(index, rect)
            if image is None:
                painter.fillRect(rect, QColor(self.view.background).lighter(115))
            else:
                painter.drawImage(rect, image)
        painter.end()
        self.view.painted()


class ImagePagesView(QScrollArea):
    pageChanged = Signal(int)  # 1-based: the first page of the spread on screen
    drawn = Signal()
    requestBack = Signal()
    requestForward = Signal()
    settingsChanged = Signal(dict)

    def __init__(
        self,
        path: Path,
        images: list[str],
        *,
        rtl: bool = False,
        sides: list[str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("Picture pages")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.path, self.images = path, images
        # each page's spread side from the book (EPUB page-spread-left/right/center), or ""
        self.sides = list(sides or ())[: len(images)] + [""] * (len(images) - len(sides or ()))
        self._paired: tuple[bool, dict[int, tuple[int, ...]]] | None = None
        self.book_rtl = rtl
        self.rtl = rtl
        self.fit = "page"  # or "width"
        self.spreads = True
        self.background = BACKGROUNDS["light"]
        self.current = 1
        from core.books.epub import EpubArchive  # the names and safety checks of the parser

        self._zip = EpubArchive(path)
        self._zip_lock = threading.Lock()
        self.stopped = threading.Event()  # set when the view goes: decoders stop
        self._decoded = _Decoded()
        self._decoded.done.connect(self._arrived, Qt.ConnectionType.QueuedConnection)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self.cache: OrderedDict[tuple[int, int, int], QImage] = OrderedDict()
        self.pending: set[tuple[int, int, int]] = set()
        self.sizes: dict[int, QSize] = {}
        self._drawn = 0
        self.canvas = _Canvas(self)
        self.setWidget(self.canvas)
        self.setWidgetResizable(False)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    @property
    def page_count(self) -> int:
        return len(self.images)

    # reading the book file (worker threads) ---------------------------------------------

    def read_image(self, index: int) -> bytes:
        if not self.images[index]:
            return b""  # a blank page of the book (it keeps the spreads paired)
        try:
            with self._zip_lock:
                return self._zip.read(self.images[index])
        except (MarginError, OSError, ValueError):
            return b""  # drawn as an empty page

    def shutdown(self) -> None:
        """Stop decoding and close the book file (the view is going): the decoders still
        running finish before it goes (a decode running on as the window went crashed it)."""
        self.stopped.set()
        self.pool.clear()
        if not self.pool.waitForDone(10_000):
            # a picture within the budget still decoding on a very busy machine: going now
            # would crash (SIGSEGV, 1 of 2 runs of bench_comic_bomb with the budget off)
            log.warning("waiting for a picture still decoding before the comic closes")
            self.pool.waitForDone(60_000)
        with self._zip_lock:
            self._zip.close()

    # settings -----------------------------------------------------------------------------

    def settings(self) -> dict[str, object]:
        return {"rtl": self.rtl, "fit": self.fit, "spreads": self.spreads}

    def apply_settings(self, values: dict[str, object]) -> None:
        self.rtl = bool(values.get("rtl", self.book_rtl))
        self.fit = "width" if values.get("fit") == "width" else "page"
        self.spreads = bool(values.get("spreads", True))
        self._relayout()

    def _changed(self) -> None:
        self._relayout()
        self.settingsChanged.emit(self.settings())

    def set_rtl(self, rtl: bool) -> None:
        self.rtl = rtl
        self._changed()

    def set_fit(self, fit: str) -> None:
        self.fit = fit
        self._changed()

    def set_spreads(self, on: bool) -> None:
        self.spreads = on
        self._changed()

    def set_theme(self, name: str) -> None:
        self.background = BACKGROUNDS.get(name, BACKGROUNDS["light"])
        self.canvas.update()

    # spreads and layout -------------------------------------------------------------------

    def wide(self) -> bool:
        viewport = self.viewport().size()
        return self.spreads and viewport.width() > viewport.height() * 1.15

    def spread(self, page: int | None = None) -> list[int]:
        """The pages (1-based, reading order) shown with ``page``: when the view is wide,
        the cover alone, then pairs (2, 3), (4, 5)…, or as the book's spread hints pair
        them (``core.books.comics.pair_pages``)."""
        page = self.current if page is None else page
        if not self.wide():
            return [page]
        if self._paired is None or self._paired[0] != self.rtl:
            from core.books.comics import pair_pages

            pairs = pair_pages(self.sides, self.rtl)
            self._paired = (self.rtl, {p: pair for pair in pairs for p in pair})
        return list(self._paired[1].get(page, (page,)))

    def _alone_on(self, pages: list[int]) -> str:
        """ "left" or "right": a page shown alone in a wide view that the book puts on that
        side of its spread (drawn there, beside an empty half, as in the printed book)."""
        if len(pages) != 1 or not self.wide():
            return ""
        side = self.sides[pages[0] - 1] if 0 < pages[0] <= len(self.sides) else ""
        return side if side in ("left", "right") else ""

    def _ratio(self, index: int) -> float:
        size = self.sizes.get(index)
        if size is None or size.isEmpty():
            first = next(iter(self.sizes.values()), None)
            size = first if first is not None and not first.isEmpty() else QSize(2, 3)
        return size.height() / max(1, size.width())

    def placed(self) -> list[tuple[int, QRectF]]:
        """Where each page of the spread is drawn on the canvas (0-based index, rect)."""
        pages = self.spread()
        if self.rtl:
            pages = list(reversed(pages))  # the first page of a pair is on the right
        viewport = self.viewport().size()
        ratios = [self._ratio(p - 1) for p in pages]
        alone = self._alone_on(pages)
        slots = 2 if alone else len(pages)
        avail_w = viewport.width() - GAP * (slots + 1)
        width = avail_w / slots
        if self.fit == "page":
            height = min(viewport.height() - 2 * GAP, max(width * r for r in ratios))
            widths = [min(width, height / r) for r in ratios]
        else:
            widths = [width] * len(pages)
        total = sum(widths) + GAP * (len(pages) - 1)
        x = max(GAP, (self.canvas.width() - total) / 2)
        if alone == "left":
            x = max(GAP, self.canvas.width() / 2 - GAP / 2 - widths[0])
        elif alone == "right":
            x = self.canvas.width() / 2 + GAP / 2
        tallest = max(w * r for w, r in zip(widths, ratios, strict=True))
        top = max(GAP, (viewport.height() - tallest) / 2) if self.fit == "page" else GAP
        out = []
        for p, w, r in zip(pages, widths, ratios, strict=True):
            out.append((p - 1, QRectF(x, top, w, w * r)))
            x += w + GAP
        return out

    def _relayout(self) -> None:
        viewport = self.viewport().size()
        height = viewport.height()
        if self.fit == "width":  # (never shrunk in between: the scroll position stays)
            self.canvas.resize(viewport.width(), max(height, self.canvas.height()))
            bottom = max((r.bottom() for _, r in self.placed()), default=0)
            height = max(height, int(bottom + GAP))
        self.canvas.resize(viewport.width(), height)
        self.canvas.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout()

    # pictures -----------------------------------------------------------------------------

    def image(self, index: int, rect: QRectF) -> QImage | None:
        dpr = self.devicePixelRatioF()
        box = QSize(int(rect.width() * dpr), int(rect.height() * dpr))
        key = (index, box.width(), box.height())
        image = self.cache.get(key)
        if image is not None:
            self.cache.move_to_end(key)
            return image
        near = next((v for k, v in self.cache.items() if k[0] == index), None)
        self._request(index, box)
        return near  # an older size while the new one decodes

    def _request(self, index: int, box: QSize) -> None:
        key = (index, box.width(), box.height())
        if key in self.pending or key in self.cache or not 0 <= index < self.page_count:
            return
        self.pending.add(key)
        self.pool.start(_Decode(self, index, key, box))

    def _arrived(self, index: int, key: tuple[int, int, int], image: QImage) -> None:
        self.pending.discard(key)
        if image.isNull():
            image = QImage(max(1, key[1]), max(1, key[2]), QImage.Format.Format_RGB32)
            image.fill(QColor("white"))
        first = index not in self.sizes
        self.sizes.setdefault(index, image.size())
        self.cache[key] = image
        while len(self.cache) > CACHE:
            self.cache.popitem(last=False)
        if first:
            self._relayout()  # the page's real shape is known now
        self.canvas.update()
        self._prefetch()

    def _prefetch(self) -> None:
        spread = self.spread()
        placed = dict(self.placed())
        rect = next(iter(placed.values()), None)
        if rect is None:
            return
        dpr = self.devicePixelRatioF()
        box = QSize(int(rect.width() * dpr), int(rect.height() * dpr))
        for page in (spread[-1] + 1, spread[-1] + 2, spread[0] - 1):
            if 1 <= page <= self.page_count and not any(k[0] == page - 1 for k in self.cache):
                self._request(page - 1, box)

    def painted(self) -> None:
        shown = [index for index, _ in self.placed()]
        if all(any(k[0] == i for k in self.cache) for i in shown) and self._drawn != self.current:
            self._drawn = self.current
            self.drawn.emit()

    def is_drawn(self) -> bool:
        return self._drawn == self.current

    # turning pages ------------------------------------------------------------------------

    def go_to_page(self, page: int, offset: float = 0) -> None:
        page = max(1, min(page, self.page_count))
        self.current = self.spread(page)[0]
        self._drawn = 0
        self._relayout()
        self.verticalScrollBar().setValue(int(offset))
        self.pageChanged.emit(self.current)

    def next_page(self) -> bool:
        following = self.spread()[-1] + 1
        if following > self.page_count:
            return False
        self.go_to_page(following)
        return True

    def previous_page(self) -> bool:
        if self.current <= 1:
            return False
        self.go_to_page(self.spread(self.current - 1)[0])
        return True

    def next_screen(self) -> bool:
        bar = self.verticalScrollBar()
        if self.fit == "width" and bar.value() < bar.maximum():
            bar.setValue(bar.value() + max(20, self.viewport().height() - 40))
            return True
        return self.next_page()

    def previous_screen(self) -> bool:
        bar = self.verticalScrollBar()
        if self.fit == "width" and bar.value() > 0:
            bar.setValue(bar.value() - max(20, self.viewport().height() - 40))
            return True
        if not self.previous_page():
            return False
        if self.fit == "width":
            bar.setValue(bar.maximum())
        return True

    def position(self) -> tuple[int, int]:
        return (self.current, self.verticalScrollBar().value())

    def _towards_left(self) -> None:
        self.next_page() if self.rtl else self.previous_page()

    def _towards_right(self) -> None:
        self.previous_page() if self.rtl else self.next_page()

    def event(self, event: QEvent) -> bool:
        if claims(event):
            event.accept()  # the page turns here, not in a window shortcut
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        moves: dict[str, Callable[[], object]] = {  # the reading keys (reading_keys.py)
            "next": self.next_screen,
            "previous": self.previous_screen,
            "start": lambda: self.go_to_page(1),  # a book of pictures: its first page
            "end": lambda: self.go_to_page(self.page_count),
        }
        action = moves.get(reading_move(event, self.rtl) or "")
        if action is None:
            super().keyPressEvent(event)
            return
        action()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if history_button(self, event):
            return
        if event.button() == Qt.MouseButton.LeftButton:
            x = event.position().x() / max(1, self.width())
            if x < 0.35:
                self._towards_left()
            elif x > 0.65:
                self._towards_right()
            return
        super().mousePressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        items: list[tuple[str, bool, Callable[[bool], None]]] = [
            ("Right to left (manga)", self.rtl, self.set_rtl),
            ("Fit page", self.fit == "page", lambda on: self.set_fit("page" if on else "width")),
            ("Fit width", self.fit == "width", lambda on: self.set_fit("width" if on else "page")),
            ("Two pages when wide", self.spreads, self.set_spreads),
        ]
        for text, checked, slot in items:
            action = QAction(text, menu, checkable=True, checked=checked)
            action.toggled.connect(slot)
            menu.addAction(action)
        menu.exec(event.globalPos())


def picture_pages(library: Library, book: BookInfo) -> tuple[list[str], bool, list[str]] | None:
    """The pictures of a book whose pages are pictures (a comic, a pre-paginated EPUB), in
    order, whether it reads right to left and each page's spread side ("left", "right",
    "center" or ""); None for a book of text."""
    from core.books.comics import image_of, is_image_page, side_of

    if book.format not in ("cbz", "epub") or book.page_count < 1:
        return None
    if not is_image_page(library.page(book.id, 1).html):
        return None
    pages = library.pages(book.id, 1, book.page_count)
    found = [image_of(p.html or "") for p in pages]
    sides = [side_of(p.html or "") for p in pages]
    return [name for name, _ in found], any(rtl for _, rtl in found[:1]), sides
