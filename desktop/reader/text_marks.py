"""Marks, highlights and the selection in a reflowable book's text view: the marked words of
a citation or a Find match (placed where they really are, centred), the reader's highlights
drawn over their anchored offsets, and the selection as stored pages and offsets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextEdit, QWidget

from desktop.highlights.look import highlight_format
from desktop.reader.text_flow import PageFlow
from desktop.theme import MARK_RGBA


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


class TextMarks(PageFlow):
    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(book_file, fmt, parent)
        self._spans: list[Span] = []
        self._drawn: list[tuple[int, int, int]] = []  # (start, end, highlight id) on screen
        self._mark_text = ""
        self._mark_page = 0
        self._mark_pinned = False  # the mark stays centred until the reader scrolls

    def set_spans(self, spans: list[Span]) -> None:
        self._spans = spans
        self._decorate()

    # marks and highlights ----------------------------------------------------------------

    def _find_from(self, text: str, position: int) -> QTextCursor | None:
        words = " ".join(text.split()).replace("\u2060", "\u200d")  # as text_flow shows it
        doc = self.document()
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

    def _place_mark(self, page: int, mark: str, nth: int = 0, near: int = -1) -> bool:
        """Mark ``mark`` where it really is: on ``page`` (its ``nth`` occurrence there, or the
        one closest to offset ``near``), else where it continues on the next page, else on
        the page before; then centre it."""
        if page not in self.loaded:
            return False
        start = self.starts[self.loaded.index(page)]
        cursor = self._find_from(mark, start)
        if near >= 0 and cursor is not None:
            target = self._pos(page, near)
            page_end = self._pos(page, 1 << 30)
            best = cursor
            following: QTextCursor | None = cursor
            while following is not None and following.selectionStart() <= page_end:
                if abs(following.selectionStart() - target) < abs(best.selectionStart() - target):
                    best = following
                following = self._find_from(mark, following.selectionEnd())
            cursor = best
        for _ in range(nth):
            if cursor is None:
                break
            later = self._find_from(mark, cursor.selectionEnd())
            if later is None:
                break
            cursor = later
        i = self.loaded.index(page)
        if cursor is None or (
            i + 2 < len(self.starts) and cursor.selectionStart() >= self.starts[i + 2]
        ):
            if i > 0:
                cursor = self._find_from(mark, self.starts[i - 1])
                if cursor is not None and cursor.selectionStart() >= start:
                    cursor = None
            else:
                cursor = None
        if cursor is None:
            return False
        self._mark = (cursor.selectionStart(), cursor.selectionEnd())
        self._mark_page = self.page_offset(cursor.selectionStart())[0]
        self._scroll_to_position(self._mark[0], centre=True)
        return True

    def mark_position(self) -> tuple[int, int] | None:
        return self._mark

    def mark_span(self, start: int, end: int) -> None:
        """Mark document positions ``start``..``end``: a passage known by its offsets (an
        anchor), marked exactly, also where it runs over a paragraph break."""
        self._mark = (start, end)
        self._mark_page = self.page_offset(start)[0]
        self._decorate()

    def marked_page(self) -> int:
        return self._mark_page if self._mark is not None else 0

    def _decorate(self) -> None:
        extras: list[QTextEdit.ExtraSelection] = []
        self._drawn = []
        doc = self.document()
        first, last = (self.loaded[0], self.loaded[-1]) if self.loaded else (0, -1)
        for span in self._spans:
            cursor: QTextCursor | None = None
            if span.start is not None and span.end is not None:
                (p1, o1), (p2, o2) = span.start, span.end
                if p2 < first or p1 > last:
                    continue
                a = self._pos(p1, o1) if p1 >= first else 0
                b = self._pos(p2, o2) if p2 <= last else self._end()
                if b > a:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(a)
                    cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            elif first <= span.page <= last:
                cursor = self._find_from(span.text, self.starts[self.loaded.index(span.page)])
            if cursor is not None:
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                sel.format = highlight_format(span.colour, span.style)
                extras.append(sel)
                self._drawn.append((cursor.selectionStart(), cursor.selectionEnd(), span.id))
        if self._mark is not None:
            cursor = QTextCursor(doc)
            cursor.setPosition(self._mark[0])
            cursor.setPosition(self._mark[1], QTextCursor.MoveMode.KeepAnchor)
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(*MARK_RGBA))
            sel.format = fmt
            extras.append(sel)
        self.setExtraSelections(extras)

    def highlight_at(self, position: int) -> int:
        """The id of the highlight drawn over document ``position`` (0 when none)."""
        return next((i for a, b, i in self._drawn if i and a <= position <= b), 0)

    def marked(self) -> bool:
        return any(
            sel.format.background().color().alpha() == MARK_RGBA[3]
            for sel in self.extraSelections()
        )

    def mark_visible(self) -> bool:
        """True when the whole marked passage (or its first screenful) is on screen."""
        if self._mark is None:
            return False
        top = self.verticalScrollBar().value()
        bottom = top + self.viewport().height()
        y1 = self._y(self._mark[0])
        return top <= y1 and y1 + self.line_height() <= bottom

    # selection ---------------------------------------------------------------------------

    def selected_text(self) -> str:
        return self.textCursor().selectedText().replace("\u2029", "\n").strip()

    def selection_anchor(self) -> dict[str, dict[str, int]] | None:
        """Where the selection starts and ends, as stored pages and offsets."""
        cursor = self.textCursor()
        if not cursor.hasSelection() or not self.loaded:
            return None
        p1, o1 = self.page_offset(cursor.selectionStart())
        p2, o2 = self.page_offset(cursor.selectionEnd())
        return {"start": {"page": p1, "offset": o1}, "end": {"page": p2, "offset": o2}}

    def selection_page(self) -> int:
        cursor = self.textCursor()
        return self.page_offset(cursor.selectionStart())[0] if cursor.hasSelection() else 0

    def find_text(self, text: str) -> bool:
        return self._find_from(text, 0) is not None

    def select_text(self, text: str) -> bool:
        """Select ``text`` (the first time it appears from the top page on)."""
        start = self.starts[self.loaded.index(self.page.number)] if self.page and self.loaded else 0
        cursor = self.document().find(text, start, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            cursor = self.document().find(text, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            return False
        self.setTextCursor(cursor)
        return True
