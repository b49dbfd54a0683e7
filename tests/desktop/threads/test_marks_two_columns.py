"""In the paged view's two columns, a mark beside a passage of the second column is drawn in
the gutter beside that column (not in the first column's margin), and clicking it opens its
thread; the text between the strips stays the view's. Screenshots light and dark go to the
folder MARGIN_SHOTS names, if any."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtTest import QTest

from core.store.anchors import collapse, view_to_stored
from core.store.library import Library
from desktop.highlights.margin_marks import THREAD_RGB
from tests.desktop.reader.conftest import alice_window, text_view
from tests.support.shots import save_shot


def _close(colour: QColor, rgb: tuple[int, int, int], slack: int = 40) -> bool:
    have = (colour.red(), colour.green(), colour.blue())
    return all(abs(a - b) <= slack for a, b in zip(have, rgb, strict=True))


def _blue_columns(image: Any, y: int, width: int) -> list[int]:
    """The x of every thread-blue pixel on row ``y`` of ``image``."""
    ratio = image.devicePixelRatio()
    return [
        x
        for x in range(width)
        if _close(image.pixelColor(int(x * ratio), int(y * ratio)), THREAD_RGB, 30)
    ]


def test_a_mark_in_the_second_column_is_drawn_beside_it_and_opens_its_thread(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with alice_window(library, books_dir, qtbot, 10) as (win, book):
        win.resize(1500, 900)
        reader = win.reader
        reader.set_typography(replace(reader.typography, layout="paged", columns=2))
        view = text_view(reader)
        qtbot.waitUntil(lambda: view.pager.paged and len(view.pager.columns) == 2, timeout=20000)
        second = view.pager.columns[1]
        # a sentence that starts inside the second column, a few lines down
        cursor = QTextCursor(view.document())
        cursor.setPosition(second.first + 200)
        cursor.movePosition(QTextCursor.MoveOperation.NextWord)
        position = cursor.position()
        page, offset = view.flow.page_offset(position)
        stored = library.page(book.id, page).text
        start = view_to_stored(stored, offset)
        words = " ".join(collapse(stored[start:]).split()[:6])
        thread = win.app.conversations.thread_for(book.id, words, page, near=start)
        assert thread.quote is not None and thread.quote.start == start
        first_thread = win.app.conversations.thread_for(
            book.id, " ".join(collapse(library.page(book.id, 10).text).split()[:5]), 10, near=0
        )
        win.threads.refresh()
        marks = win.threads.marks
        qtbot.waitUntil(lambda: len(marks._hits) == 2, timeout=20000)

        # where each mark stands: beside its own column, left of its own text
        width = view.pager.column_width()
        left_margin = view.document().rootFrame().frameFormat().leftMargin()
        boxes = {
            mark.key: marks.mapTo(view.viewport(), box.center().toPoint())
            for box, mark in marks._hits
        }
        x2 = boxes[thread.id].x()
        assert width < x2 < width + left_margin, "in the gutter, left of the second column's text"
        assert 0 < boxes[first_thread.id].x() < left_margin, "the first column's: its margin"
        line = view.cursorRect(cursor)
        assert line.top() <= boxes[thread.id].y() <= line.bottom(), "beside its line"

        # the pixels: blue in the gutter on that line, light and dark
        for theme in ("light", "dark"):
            win.set_theme(theme)
            qtbot.waitUntil(lambda: len(marks._hits) == 2, timeout=3000)
            qtbot.wait(30)
            image = view.viewport().grab().toImage()
            y = boxes[thread.id].y()
            blue = _blue_columns(image, y, view.viewport().width())
            assert blue and all(width < x < width + left_margin for x in blue), (theme, blue)
            save_shot(win.grab(), f"two-columns-{theme}.png")
        win.set_theme("light")

        # the text between the strips is the view's: a click there is not a mark's
        assert marks.mask().contains(QPoint(int(width // 2) - marks.x(), int(y))) is False
        # a real click on the gutter mark opens its thread, its words marked
        hit = marks.mapFromParent(boxes[thread.id])
        QTest.mouseClick(marks, Qt.MouseButton.LeftButton, pos=hit)
        chat = win.chat
        qtbot.waitUntil(lambda: chat.conversation_id == thread.id, timeout=20000)
        assert view.marks.marked()
