"""Marks, highlights and the selection in a reflowable book's text view: the marked words of
a citation or a Find match (placed where they really are, centred), the reader's highlights
drawn over their anchored offsets, and the selection as stored pages and offsets.

``TextMarks`` is a part the text view owns (``view.marks``), not a base class: it is given
the view, and reads its flow (``view.flow``: its loaded pages and their positions); it keeps
its own state (the highlights to draw, the marked words, whether the mark stays centred).
The marked range itself is the flow's ``mark_range``: the flow moves it as pages come and
go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextEdit

from desktop.highlights.look import highlight_format
from desktop.theme import MARK_RGBA

if TYPE_CHECKING:
    from desktop.reader.text_view import TextView


@dataclass(frozen=True)
class Span:
    """A highlight to draw: from (page, offset) to (page, offset), offsets in the page's text
    as this view lays it out; ``text`` is the fallback for old highlights without offsets."""

    page: int
    text: str
    colour: str
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None
    style: str = "highlight"  # or "underline", "strike"
    id: int = 0  # the stored highlight's


class TextMarks:
    """The marks of one text view (``view.marks``), over its flow."""

    def __init__(self, view: TextView) -> None:
        self.view = view
        self.spans: list[Span] = []
        self._drawn: list[tuple[int, int, int]] = []  # (start, end, highlight id) on screen
        self.text = ""  # the words last asked to be marked
        self._mark_page = 0
        self.pinned = False  # the mark stays centred until the reader scrolls

    def set_spans(self, spans: list[Span]) -> None:
        self.spans = spans
        self.decorate()

    # marks and highlights ----------------------------------------------------------------

    def find_from(self, text: str, position: int) -> QTextCursor | None:
        view = self.view
        words = " ".join(text.split()).replace("\u2060", "\u200d")  # as text_flow shows it
        doc = view.document()
        for candidate in (words, words[:120], " ".join(words.split()[:8])):
            if not candidate:
                continue
            cursor = doc.find(candidate, position)
            if not cursor.isNull():
                return cursor
        # a quote that runs over a paragraph break (the view has a break where the stored
        # text has a space): mark the longest part of it that sits in one paragraph
        parts = words.split()
        for n in range(min(len(parts), 12) - 1, 2, -1):
            for candidate in (" ".join(parts[:n]), " ".join(parts[-n:])):
                cursor = doc.find(candidate, position)
                if not cursor.isNull():
                    return cursor
        return None

    def place(self, page: int, mark: str, nth: int = 0, near: int = -1) -> bool:
        """Mark ``mark`` where it really is: on ``page`` (its ``nth`` occurrence there, or the
        one closest to offset ``near``), else where it continues on the next page, else on
        the page before; then centre it."""
        flow = self.view.flow
        if page not in flow.loaded:
            return False
        start = flow.starts[flow.loaded.index(page)]
        cursor = self.find_from(mark, start)
        if near >= 0 and cursor is not None:
            target = flow.pos(page, near)
            page_end = flow.pos(page, 1 << 30)
            best = cursor
            following: QTextCursor | None = cursor
            while following is not None and following.selectionStart() <= page_end:
                if abs(following.selectionStart() - target) < abs(best.selectionStart() - target):
                    best = following
                following = self.find_from(mark, following.selectionEnd())
            cursor = best
        for _ in range(nth):
            if cursor is None:
                break
            later = self.find_from(mark, cursor.selectionEnd())
            if later is None:
                break
            cursor = later
        i = flow.loaded.index(page)
        if cursor is None or (
            i + 2 < len(flow.starts) and cursor.selectionStart() >= flow.starts[i + 2]
        ):
            if i > 0:
                cursor = self.find_from(mark, flow.starts[i - 1])
                if cursor is not None and cursor.selectionStart() >= start:
                    cursor = None
            else:
                cursor = None
        if cursor is None:
            return False
        flow.mark_range = (cursor.selectionStart(), cursor.selectionEnd())
        self._mark_page = flow.page_offset(cursor.selectionStart())[0]
        flow.scroll_to_position(flow.mark_range[0], centre=True)
        return True

    def mark_position(self) -> tuple[int, int] | None:
        flow = self.view.flow
        return flow.mark_range

    def mark_span(self, start: int, end: int) -> None:
        """Mark document positions ``start``..``end``: a passage known by its offsets (an
        anchor), marked exactly, also where it runs over a paragraph break."""
        flow = self.view.flow
        flow.mark_range = (start, end)
        self._mark_page = flow.page_offset(start)[0]
        self.decorate()

    def marked_page(self) -> int:
        flow = self.view.flow
        return self._mark_page if flow.mark_range is not None else 0

    def decorate(self) -> None:
        view, flow = self.view, self.view.flow
        extras: list[QTextEdit.ExtraSelection] = []
        self._drawn = []
        doc = view.document()
        first, last = (flow.loaded[0], flow.loaded[-1]) if flow.loaded else (0, -1)
        for span in self.spans:
            cursor: QTextCursor | None = None
            if span.start is not None and span.end is not None:
                (p1, o1), (p2, o2) = span.start, span.end
                if p2 < first or p1 > last:
                    continue
                a = flow.pos(p1, o1) if p1 >= first else 0
                b = flow.pos(p2, o2) if p2 <= last else flow.end_position()
                if b > a:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(a)
                    cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            elif first <= span.page <= last:
                cursor = self.find_from(span.text, flow.starts[flow.loaded.index(span.page)])
            if cursor is not None:
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                sel.format = highlight_format(span.colour, span.style)
                extras.append(sel)
                self._drawn.append((cursor.selectionStart(), cursor.selectionEnd(), span.id))
        if flow.mark_range is not None:
            cursor = QTextCursor(doc)
            cursor.setPosition(flow.mark_range[0])
            cursor.setPosition(flow.mark_range[1], QTextCursor.MoveMode.KeepAnchor)
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(*MARK_RGBA))
            # marked by more than colour (WCAG 1.4.1): a dashed line under it too (a
            # highlight's underline style is solid)
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
            fmt.setUnderlineColor(QColor(view.theme.text))
            sel.format = fmt
            extras.append(sel)
        view.setExtraSelections(extras)

    def highlight_at(self, position: int) -> int:
        """The id of the highlight drawn over document ``position`` (0 when none)."""
        return next((i for a, b, i in self._drawn if i and a <= position <= b), 0)

    def caret_at_mark(self) -> bool:
        """The caret at the start of the marked passage (a screen reader reads from the
        caret, so it reads the passage a citation opened); nothing scrolls. False when there
        is no mark, or a selection stays."""
        view, flow = self.view, self.view.flow
        cursor = view.textCursor()
        if flow.mark_range is None or cursor.hasSelection():
            return False
        cursor.setPosition(flow.mark_range[0])
        bar = view.verticalScrollBar()
        value = bar.value()
        busy, view.busy = view.busy, True
        view.setTextCursor(cursor)
        bar.setValue(value)
        view.busy = busy
        return True

    def marked(self) -> bool:
        view = self.view
        return any(
            sel.format.background().color().alpha() == MARK_RGBA[3]
            for sel in view.extraSelections()
        )

    def mark_visible(self) -> bool:
        """True when the whole marked passage (or its first screenful) is on screen."""
        view, flow = self.view, self.view.flow
        if flow.mark_range is None:
            return False
        top = view.verticalScrollBar().value()
        bottom = top + view.viewport().height()
        y1 = flow.y_of(flow.mark_range[0])
        return top <= y1 and y1 + flow.line_height() <= bottom

    # selection ---------------------------------------------------------------------------

    def selected_text(self) -> str:
        view = self.view
        return view.textCursor().selectedText().replace("\u2029", "\n").strip()

    def selection_anchor(self) -> dict[str, dict[str, int]] | None:
        """Where the selection starts and ends, as stored pages and offsets."""
        view, flow = self.view, self.view.flow
        cursor = view.textCursor()
        if not cursor.hasSelection() or not flow.loaded:
            return None
        p1, o1 = flow.page_offset(cursor.selectionStart())
        p2, o2 = flow.page_offset(cursor.selectionEnd())
        return {"start": {"page": p1, "offset": o1}, "end": {"page": p2, "offset": o2}}

    def selection_page(self) -> int:
        view, flow = self.view, self.view.flow
        cursor = view.textCursor()
        return flow.page_offset(cursor.selectionStart())[0] if cursor.hasSelection() else 0

    def find_text(self, text: str) -> bool:
        return self.find_from(text, 0) is not None

    def select_text(self, text: str) -> bool:
        """Select ``text`` (the first time it appears from the top page on)."""
        view, flow = self.view, self.view.flow
        start = flow.starts[flow.loaded.index(flow.page.number)] if flow.page and flow.loaded else 0
        cursor = view.document().find(text, start, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            cursor = view.document().find(text, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            return False
        view.setTextCursor(cursor)
        return True
