"""Screen pages over a laid-out document: where a screen's columns start and end so that no
line is cut at the bottom and none is shown twice or skipped across turns.

A column is a vertical slice of the document, from the top of its first line to the top of
the first line that did not fit (``bottom``), drawn clipped to that slice. Screens are made
forwards from a line (``screen_from``), or backwards to end just before a line
(``screen_before``) when the reader turns back to a place never seen going forward.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from PySide6.QtGui import QTextBlock, QTextDocument

from desktop.reader.picture_text import picture_line

TWO_COLUMNS_FROM = 860  # px of book area: two columns of at least ~45 characters from here


@dataclass(frozen=True)
class Line:
    top: float  # document y of the line's top
    height: float  # the glyphs' height (the spacing under it is not needed to read it)
    start: int  # document position of its first character
    end: int  # document position after its last character
    heading: bool = False  # a line of a heading (kept with the text that follows it)


@dataclass(frozen=True)
class Column:
    top: float  # document y drawn at the column's top
    bottom: float  # document y where the column is clipped (the next line's top)
    first: int  # document position of the first character shown
    end: int  # document position after the last character shown (the next column's first)


def _lines(block: QTextBlock, layout_rect_top: float) -> list[Line]:
    layout = block.layout()
    if layout is None:
        return []
    out = []
    heading = block.blockFormat().headingLevel() > 0
    picture = picture_line(block)
    if picture is not None and layout.lineCount() == 1:  # a picture's line (picture_text)
        line = layout.lineAt(0)
        start = block.position() + line.textStart()
        top = layout_rect_top + picture[0]
        return [Line(top, picture[1], start, start + line.textLength(), heading)]
    for i in range(layout.lineCount()):
        line = layout.lineAt(i)
        start = block.position() + line.textStart()
        top = layout_rect_top + line.y()
        out.append(Line(top, line.height(), start, start + line.textLength(), heading))
    if not out:  # an empty block still takes a line's place
        out.append(Line(layout_rect_top, 0.0, block.position(), block.position()))
    return out


def lines_down(doc: QTextDocument, position: int) -> Iterator[Line]:
    """The lines from the one holding ``position`` to the end, in document order."""
    layout = doc.documentLayout()
    block = doc.findBlock(position)
    while block.isValid():
        top = layout.blockBoundingRect(block).top()
        for line in _lines(block, top):
            if line.end > position or line.start >= position:
                yield line
        block = block.next()


def lines_up(doc: QTextDocument, position: int) -> Iterator[Line]:
    """The lines before the one holding ``position``, last first."""
    held = line_at(doc, position)
    target = held.start if held is not None else position
    layout = doc.documentLayout()
    block = doc.findBlock(min(target, doc.characterCount() - 1))
    while block.isValid():
        top = layout.blockBoundingRect(block).top()
        for line in reversed(_lines(block, top)):
            if line.start < target:
                yield line
        block = block.previous()


def line_at(doc: QTextDocument, position: int) -> Line | None:
    return next(lines_down(doc, position), None)


def column_down(doc: QTextDocument, position: int, height: float, limit: int = -1) -> Column:
    """The column that starts with the line holding ``position``: every line whose glyphs fit
    in ``height`` (at least one, however tall), ending before ``limit`` when it is given, and
    before a heading that would end it (the heading goes on with its text)."""
    first: Line | None = None
    heading: Line | None = None  # the first line of the heading that ends the column so far
    for line in lines_down(doc, position):
        if first is None:
            first = line
            if limit >= 0 and line.start >= limit:
                return Column(line.top, line.top, line.start, line.start)
            continue
        if line.top + line.height > first.top + height or (limit >= 0 and line.start >= limit):
            if heading is not None:
                line = heading  # a heading is not left alone at the foot of a column
            return Column(first.top, line.top, first.start, line.start)
        heading = (heading or line) if line.heading else None
    if first is None:
        end = doc.characterCount() - 1
        y = doc.documentLayout().documentSize().height()
        return Column(y, y, end, end)
    return Column(first.top, first.top + height, first.start, doc.characterCount())


def column_up(doc: QTextDocument, position: int, height: float) -> Column:
    """The column that ends just before the line starting at ``position``: as many lines
    before it as fit in ``height`` (at least one). A heading just before ``position`` is left
    out (the column ends before it) as the forward build would: it goes with the text it
    heads, not at the foot of a column; unless nothing but headings comes before it."""
    column = _fit_up(doc, position, height, keep_headings=False)
    return column if column.first < column.end else _fit_up(doc, position, height)


def _fit_up(doc: QTextDocument, position: int, height: float, keep_headings: bool = True) -> Column:
    end_line = line_at(doc, position)
    bottom = end_line.top if end_line is not None else doc.documentLayout().documentSize().height()
    end = position
    first: Line | None = None
    last_bottom = 0.0
    for line in lines_up(doc, position):
        if first is None:
            if not keep_headings and (line.heading or line.start == line.end):
                end, bottom = line.start, line.top  # a heading (or the blank above it) at the foot
                continue
            last_bottom = line.top + line.height
        elif last_bottom - line.top > height:
            break
        first = line
    if first is None:
        return Column(bottom, bottom, end, end)
    return Column(first.top, bottom, first.start, end)


def screen_from(
    doc: QTextDocument, position: int, height: float, columns: int, limit: int = -1
) -> list[Column]:
    """A screen of ``columns`` columns starting at the line holding ``position``."""
    out: list[Column] = []
    start = position
    for _ in range(columns):
        column = column_down(doc, start, height, limit)
        out.append(column)
        start = column.end
    return out


def screen_before(doc: QTextDocument, position: int, height: float, columns: int) -> list[Column]:
    """A screen of ``columns`` columns whose last one ends just before ``position``."""
    out: list[Column] = []
    end = position
    for _ in range(columns):
        column = column_up(doc, end, height)
        out.insert(0, column)
        if column.first == end:
            break
        end = column.first
    return out
