"""A chapter heading is not left alone at the foot of a column (issue 39, item 7): the
column ends before it and the next one starts with it, no line lost or shown twice."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QTextDocument

from desktop.reader.paged import column_down, line_at, lines_down


def _doc() -> QTextDocument:
    doc = QTextDocument()
    text = "The end of a chapter, told at some length so that it wraps. " * 6
    doc.setHtml(f"<p>{text}</p><p>{text}</p><h2>Chapter II</h2><p>{text}</p>")
    doc.setTextWidth(300)
    return doc


def test_a_heading_at_the_foot_goes_on_to_the_next_column(qapp: Any) -> None:
    doc = _doc()
    lines = list(lines_down(doc, 0))
    start = doc.find("Chapter II").selectionStart()
    heading = next(line for line in lines if line.start == start)
    after = lines[lines.index(heading) + 1]
    # room for everything down to the heading, not for the line after it
    height = heading.top + heading.height - lines[0].top + (after.height / 2)
    column = column_down(doc, 0, height)
    assert column.end == heading.start, "▶ the heading was left at the foot of the column"
    following = column_down(doc, column.end, height)
    assert following.first == heading.start
    # a column that holds the heading and its text is not cut
    roomy = column_down(doc, 0, after.top + after.height - lines[0].top + 1)
    assert roomy.end > after.start
    first = line_at(doc, 0)
    assert first is not None and first.start == 0
