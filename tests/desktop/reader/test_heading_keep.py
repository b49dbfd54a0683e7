"""A chapter heading is not left alone at the foot of a column (issue 39, item 7): the
column ends before it and the next one starts with it, no line lost or shown twice."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from desktop.reader.paged import column_down, line_at, lines_down
from desktop.reader.paged_view import PAD
from tests.desktop.reader.conftest import press
from tests.desktop.reader.test_paged import open_alice, with_columns


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


def test_turning_back_to_an_unseen_screen_never_ends_it_on_a_heading(
    reader: Any, library: Any, books_dir: Any
) -> None:
    """Page Up from a screen that starts just under a chapter heading (a restored place, a
    search hit): the screen made backwards ends before the heading, full of the text above it,
    and Page Down then shows the heading with its text."""
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir, page=14)
    for columns in (1, 2):
        with_columns(reader, columns)
        doc = view.document()
        lines = list(lines_down(doc, 0))
        i = next(i for i, line in enumerate(lines) if line.heading and i > 40)
        while lines[i].heading:  # the heading's last line
            i += 1
        after = lines[i]  # the first line under the heading
        view.pager.go_screen(view.flow.page_offset(after.start))  # a screen seen never forwards
        assert view.pager.columns[0].first == after.start
        press(view, Qt.Key.Key_PageUp)
        shown = [
            line
            for column in view.pager.columns
            for line in lines_down(view.document(), column.first)
            if line.start < column.end
        ]
        for column in view.pager.columns:
            last = [line for line in shown if line.start < column.end][-1]
            assert not last.heading, "▶ the screen made backwards ends on a heading"
        # full: the last column's free space at its foot is under two lines
        column = view.pager.columns[-1]
        last = [line for line in shown if line.start < column.end][-1]
        assert (
            column.top + view.pager.page_height() - (last.top + last.height)
            < 2 * after.height + PAD
        )
        press(view, Qt.Key.Key_PageDown)
        first = line_at(view.document(), view.pager.columns[0].first)
        assert first is not None and first.heading, "▶ the heading is not shown with its text"
