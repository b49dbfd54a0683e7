"""Marks in the margin beside anchored passages: a speech mark where a thread is about the
passage, a note mark where a note is (a highlight's note, a note about a page). Clicking a
mark asks for its thread or note (``requestThread``, ``requestNote``).

The marks are a narrow strip laid over the view's left margin and use only the views'
position API, so they follow any view that keeps it: a reflowable view's ``loaded`` stored
pages, ``page_text``/``starts`` and ``cursorRect`` (a stored (page, offset) → a line on
screen), and a PDF view's page rectangles and text layout. Only the marks of the pages laid
out are placed, each once per layout (cached), so a screen turn costs a few lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QEvent, QObject, QPointF, QRect, QRectF, Qt, Signal, SignalInstance
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QRegion,
    QTextCursor,
)
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea

from core.store.anchors import BookText, collapse, stored_to_view, view_to_stored
from desktop.accessibility import announce

if TYPE_CHECKING:
    from desktop.highlights.mark_views import BookViews, MarkedPdfView, MarkedTextView

THREAD_RGB = (47, 111, 223)  # the thread mark: a blue speech mark
NOTE_RGB = (214, 140, 0)  # the note mark: an amber page corner
MARK_SIZE = 12
NO_MARKS = "Marks beside passages: none on this screen"


@dataclass(frozen=True)
class MarginMark:
    kind: str  # "thread" | "note"
    key: int  # the conversation's id (thread), the highlight's or note's id (note)
    page: int
    start: int  # where the passage starts in the page's stored text
    exact: str  # its words


def _number(value: object) -> int:
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(value)


def stored_offset(views: BookViews, page: int, anchor: object) -> int:
    """Where a selection starts in its page's stored text (-1 when not known): the text
    view's anchor counts one paragraph break where the stored text has a blank line; a PDF
    selection's (its boxes) is found by the words QtPdf selects there."""
    if not isinstance(anchor, Mapping):
        return -1
    if isinstance(anchor, dict) and "polys" in anchor and "start" not in anchor:
        return _pdf_stored_offset(views, page, anchor["polys"])
    try:
        start = anchor["start"]
        if not isinstance(start, Mapping):
            return -1
        pages = views.pages
        if _number(start["page"]) != page or pages is None:
            return -1
        return view_to_stored(pages.stored_text(page), _number(start["offset"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return -1


def _pdf_stored_offset(views: BookViews, page: int, polys: object) -> int:
    from desktop.reader.pdf_canvas import to_poly
    from desktop.reader.pdf_marks import stored_start

    pdf, pages = views.pdf_view(), views.pages
    if pdf is None or pages is None or not polys or not isinstance(polys, Sequence):
        return -1
    try:
        boxes = [to_poly(p).boundingRect() for p in polys]
    except (TypeError, ValueError, IndexError):
        return -1
    first, last = boxes[0], boxes[-1]
    selection = pdf.document.getSelection(
        page - 1,
        QPointF(first.left() + 0.5, first.center().y()),
        QPointF(last.right() - 0.5, last.center().y()),
    )
    if not selection.isValid() or not selection.text().strip():
        return -1
    raw = pdf.document.getAllText(page - 1)
    return stored_start(
        raw.text() if raw.isValid() else "",
        int(selection.startIndex()),
        selection.text(),
        pages.stored_text(page),
    )


def mark_exactly(views: BookViews, page: int, start: int, exact: str) -> bool:
    """Mark the words ``exact`` that start at stored ``start`` of ``page`` exactly (a text
    view marks a quote by searching its words, which stops at a paragraph break); False
    when the words are not there or the view cannot."""
    view, pages = views.text_view(), views.pages
    if view is None or pages is None or page not in view.flow.loaded or start < 0:
        return False
    if not hasattr(view, "marks"):
        return False
    stored = {n: pages(n).text for n in (page, page + 1) if n in view.flow.loaded}
    book = BookText(sorted(stored.items()))
    words = collapse(exact)
    first = book.position(page, start)
    if not words or book.text[first : first + len(words)] != words:
        return False
    end_page, end = book.locate(first + len(words) - 1)

    def at(n: int, offset: int) -> int:
        return int(view.flow.starts[view.flow.loaded.index(n)]) + stored_to_view(stored[n], offset)

    view.marks.mark_span(at(page, start), at(end_page, end + 1))
    return True


class _TextPlaces:
    """Where marks go in a reflowable view."""

    def __init__(self, view: MarkedTextView, stored: Callable[[int], str]) -> None:
        self.view = view
        self.stored = stored
        # a mark's offset in its page as the view lays it out: found once (it depends on the
        # stored text only), placed from the page's start on every paint
        self._offsets: dict[tuple[int, int], int] = {}

    def _position(self, mark: MarginMark) -> int | None:
        view = self.view
        if mark.page not in view.flow.loaded:
            return None
        key = (mark.page, mark.start)
        offset = self._offsets.get(key)
        if offset is None:
            offset = self._offsets[key] = stored_to_view(self.stored(mark.page), mark.start)
        return int(view.flow.starts[view.flow.loaded.index(mark.page)]) + offset

    def place(self, mark: MarginMark) -> tuple[int, float] | None:
        """(the column that holds the mark's line, the middle of that line)."""
        position = self._position(mark)
        if position is None:
            return None
        position = min(position, self.view.document().characterCount() - 1)
        columns = self._columns()
        if columns > 1 and not self.view.pager.on_screen(position):
            return None  # in neither column: no place beside one
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(position)
        rect = self.view.cursorRect(cursor)  # a paged view answers in the column holding it
        column = min(columns - 1, max(0, rect.x() // self._column_width())) if columns > 1 else 0
        return int(column), rect.top() + rect.height() / 2

    def _columns(self) -> int:
        pager = self.view.pager
        return pager.column_count() if pager.paged else 1

    def _column_width(self) -> int:
        return max(1, self.view.pager.column_width())

    def strips(self) -> list[QRect]:
        """The left margin of each column on screen (the second's is the gutter)."""
        # the root frame's left margin is where the text column starts (it stands for the
        # document margin on that side once set)
        left = self.view.document().rootFrame().frameFormat().leftMargin()
        width = int(max(MARK_SIZE + 6, left - 6))
        height = self.view.viewport().height()
        step = self._column_width()
        return [QRect(i * step, 0, width, height) for i in range(self._columns())]

    def scroll_signals(self) -> list[SignalInstance]:
        return []  # the strip stays put; a scroll only repaints it

    def moved_signals(self) -> list[SignalInstance]:
        return [self.view.verticalScrollBar().valueChanged]


class _PdfPlaces:
    """Where marks go in a PDF view: beside the line of the page where the words are."""

    def __init__(self, view: MarkedPdfView, stored: Callable[[int], str] | None = None) -> None:
        self.view = view
        self.stored = stored  # the pages' stored text: which of two equal passages is meant
        self._cache: dict[tuple[int, int, str], float | None] = {}

    def _point_y(self, mark: MarginMark) -> float | None:
        key = (mark.page, mark.start, mark.exact[:60])
        if key not in self._cache:
            self._cache[key] = self._find(mark)
        return self._cache[key]

    def _find(self, mark: MarginMark) -> float | None:
        from desktop.reader.pdf_marks import find_words

        document = self.view.document
        selection = document.getAllText(mark.page - 1)
        full = selection.text() if selection.isValid() else ""
        stored = self.stored(mark.page) if self.stored is not None else ""
        place = find_words(full, mark.exact, stored, mark.start)
        if place is None:
            return None
        found = document.getSelectionAtIndex(mark.page - 1, place[0], min(place[1], 60))
        if not found.isValid() or not found.bounds():
            return None
        box = found.bounds()[0].boundingRect()
        return box.top() + box.height() / 2

    def place(self, mark: MarginMark) -> tuple[int, float] | None:
        y = self._line_y(mark)
        return None if y is None else (0, y)

    def _line_y(self, mark: MarginMark) -> float | None:
        view = self.view
        if not 1 <= mark.page <= len(view.rects):
            return None
        rect = view.rects[mark.page - 1]
        top = view.verticalScrollBar().value()
        if rect.bottom() < top or rect.top() > top + view.viewport().height():
            return None  # not on screen: not looked up
        y = self._point_y(mark)
        if y is None:
            return None
        return view.canvas.mapTo(view.viewport(), QPointF(0, rect.top() + y * view.scale)).y()

    def strips(self) -> list[QRect]:
        view = self.view
        left = view.rects[0].left() if view.rects else 0
        x = int(view.canvas.mapTo(view.viewport(), QPointF(left, 0)).x())
        return [QRect(max(0, x), 0, MARK_SIZE + 10, view.viewport().height())]

    def scroll_signals(self) -> list[SignalInstance]:  # the pages move sideways: the strip follows
        return [self.view.horizontalScrollBar().valueChanged, self.view.zoomChanged]

    def moved_signals(self) -> list[SignalInstance]:
        return [self.view.verticalScrollBar().valueChanged]


def _thread_shape(size: float) -> QPainterPath:
    """A speech mark: a rounded bubble with a tail (made once, moved into place)."""
    path = QPainterPath()
    body = QRectF(0, 0, size, size * 0.78)
    path.addRoundedRect(body, 3, 3)
    tail = QPainterPath()
    tail.moveTo(size * 0.25, body.bottom() - 1)
    tail.lineTo(size * 0.2, size)
    tail.lineTo(size * 0.55, body.bottom() - 1)
    return path.united(tail)


def _note_shape(size: float) -> QPainterPath:
    """A note mark: a small page with a folded corner."""
    path = QPainterPath()
    fold = size * 0.35
    path.moveTo(0, 0)
    path.lineTo(size - fold, 0)
    path.lineTo(size, fold)
    path.lineTo(size, size)
    path.lineTo(0, size)
    path.closeSubpath()
    return path


SHAPES = {
    "thread": (_thread_shape(MARK_SIZE), QColor(*THREAD_RGB)),
    "note": (_note_shape(MARK_SIZE), QColor(*NOTE_RGB)),
}


class _Places(Protocol):
    """Where marks go in one kind of view."""

    def place(self, mark: MarginMark) -> tuple[int, float] | None: ...

    def strips(self) -> list[QRect]: ...

    def scroll_signals(self) -> list[SignalInstance]: ...

    def moved_signals(self) -> list[SignalInstance]: ...


class _NoPlaces:
    def place(self, mark: MarginMark) -> tuple[int, float] | None:
        return None

    def strips(self) -> list[QRect]:
        return [QRect(0, 0, 0, 0)]

    def scroll_signals(self) -> list[SignalInstance]:
        return []

    def moved_signals(self) -> list[SignalInstance]:
        return []


class MarginMarks(QAbstractButton):  # a button to assistive technology, named by its mark
    """The strip of marks over a view's left margin — over each column's left margin in a
    two-column paged view (a mask: the text between stays the view's, for clicks and the
    mouse pointer)."""

    requestThread = Signal(int)  # conversation id
    requestNote = Signal(object)  # MarginMark

    def __init__(
        self, view: QAbstractScrollArea, stored: Callable[[int], str] | None = None
    ) -> None:
        super().__init__(view.viewport())
        self.setObjectName("marginMarks")
        self.setAccessibleName(NO_MARKS)
        self.setAccessibleDescription(
            "Marks beside passages with threads or notes: Up and Down move between those on "
            "the screen, Enter opens one"
        )
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # one Tab stop once a mark is there
        self.current = 0  # the mark the keys are on, among those on screen
        self.view = view
        self.places: _Places = _NoPlaces()  # a view without the position API: no marks
        if stored is not None and hasattr(view, "flow") and hasattr(view, "cursorRect"):
            self.places = _TextPlaces(cast("MarkedTextView", view), stored)
        elif hasattr(view, "rects") and hasattr(view, "canvas"):
            self.places = _PdfPlaces(cast("MarkedPdfView", view), stored)
        self.marks: list[MarginMark] = []
        self._by_page: dict[int, list[MarginMark]] = {}
        self._hits: list[tuple[QRectF, MarginMark]] = []
        self._strips: list[QRect] = []
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        for signal in self.places.scroll_signals():
            signal.connect(self._moved)
        for signal in self.places.moved_signals():
            signal.connect(self._moved)  # (the strip moves only when the column changed)
        view.viewport().installEventFilter(self)
        self._place()
        self.show()

    def set_marks(self, marks: list[MarginMark]) -> None:
        self.marks = marks
        self._by_page = {}
        for mark in marks:
            self._by_page.setdefault(mark.page, []).append(mark)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus if marks else Qt.FocusPolicy.NoFocus)
        self.current = 0
        self._say()
        self.update()

    # the keyboard and screen readers: one Tab stop, named by the mark it is on --------------

    def _on_screen(self) -> list[MarginMark]:
        return [mark for _c, _y, mark in sorted(self.placed_marks(), key=lambda m: m[:2])]

    def _say(self) -> None:
        shown = self._on_screen()
        if not shown:
            self.setAccessibleName(NO_MARKS)
            return
        self.current = min(self.current, len(shown) - 1)
        mark = shown[self.current]
        words = " ".join(mark.exact.split())
        words = words if len(words) <= 80 else words[:79].rstrip() + "…"
        what = "Thread" if mark.kind == "thread" else "Note"
        self.setAccessibleName(
            f"{what} beside “{words}”, p. {mark.page} ({self.current + 1} of {len(shown)})"
        )

    def focusInEvent(self, event: QFocusEvent) -> None:
        self._say()
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        shown = self._on_screen()
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down) and shown:
            step = 1 if key == Qt.Key.Key_Down else -1
            self.current = max(0, min(len(shown) - 1, self.current + step))
            self._say()
            announce(self, self.accessibleName())  # Orca 43 does not say a button's new name
            self.update()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and shown:
            self._open(shown[min(self.current, len(shown) - 1)])
        else:
            super().keyPressEvent(event)

    def _open(self, mark: MarginMark) -> None:
        if mark.kind == "thread":
            self.requestThread.emit(mark.key)
        else:
            self.requestNote.emit(mark)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        strips = self.places.strips()
        if strips == self._strips:
            return
        self._strips = strips
        bounds = QRect(strips[0])
        region = QRegion()
        for strip in strips:
            bounds = bounds.united(strip)
            region = region.united(QRegion(strip))
        if bounds != self.geometry():
            self.setGeometry(bounds)
            self.raise_()
        if len(strips) > 1:
            self.setMask(region.translated(-bounds.topLeft()))
        else:
            self.clearMask()

    def _moved(self, *_: object) -> None:
        self._place()
        if self.hasFocus():
            self._say()
        self.update()

    def visible_marks(self) -> list[tuple[float, MarginMark]]:
        """The marks on screen with the middle of their line (in this strip's coordinates)."""
        return [(y, mark) for _column, y, mark in self.placed_marks()]

    def placed_marks(self) -> list[tuple[int, float, MarginMark]]:
        """The marks on screen: the column holding their line and its middle."""
        flow = getattr(self.view, "flow", None)  # a text view's laid-out pages; a PDF's all
        pages = (flow.loaded if flow is not None else None) or list(self._by_page)
        out = []
        height = self.height()
        for page in pages:
            for mark in self._by_page.get(page, ()):
                place = self.places.place(mark)
                if place is not None and -MARK_SIZE <= place[1] <= height + MARK_SIZE:
                    out.append((place[0], place[1], mark))
        return out

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        self._hits = []
        taken: set[tuple[int, int, str]] = set()
        strips = self._strips or [self.rect()]
        origin = self.geometry().left()
        placed = sorted(self.placed_marks(), key=lambda m: (m[0], m[1], m[2].kind != "thread"))
        on_screen = self._on_screen()
        keyed = on_screen[min(self.current, len(on_screen) - 1)] if on_screen else None
        for column, y, mark in placed:
            line = (column, round(y / 4), mark.kind)
            if line in taken:
                continue  # one mark of a kind per line
            taken.add(line)
            strip = strips[min(column, len(strips) - 1)]
            left, right = strip.left() - origin, strip.right() - origin - 3
            x = right - MARK_SIZE if mark.kind == "thread" else right - 2 * MARK_SIZE - 3
            if x < left + 2:  # a narrow margin (the paged view's): one slot, a note below
                x = max(left + 2, right - MARK_SIZE)
                if mark.kind == "note" and (column, line[1], "thread") in taken:
                    y += MARK_SIZE / 2 + 1
            box = QRectF(x, y - MARK_SIZE / 2, MARK_SIZE, MARK_SIZE)
            shape, colour = SHAPES[mark.kind]
            painter.setBrush(colour)
            painter.drawPath(shape.translated(box.topLeft()))
            if mark is keyed and self.hasFocus():  # the mark the keys are on: a ring
                painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(box.adjusted(-2, -2, 2, 2))
                painter.setPen(Qt.PenStyle.NoPen)
            self._hits.append((box.adjusted(-3, -3, 3, 3), mark))
        painter.end()

    def mark_at(self, x: float, y: float) -> MarginMark | None:
        for box, mark in self._hits:
            if box.contains(QPointF(x, y)):
                return mark
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        mark = self.mark_at(event.position().x(), event.position().y())
        if mark is None or event.button() != Qt.MouseButton.LeftButton:
            event.ignore()
            return
        self._open(mark)
        event.accept()
