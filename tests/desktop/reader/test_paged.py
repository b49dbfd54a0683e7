"""Paged reading: screens of one or two columns turned by real key presses, clicks and the
wheel; no line cut, skipped or shown twice; the reading session's rules hold."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QTextCursor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.paged import TWO_COLUMNS_FROM, lines_down
from desktop.reader.paged_view import PAD
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from tests.desktop.reader.conftest import press, text_view

FORWARD = [Qt.Key.Key_PageDown, Qt.Key.Key_Space, Qt.Key.Key_Right, Qt.Key.Key_Down]


def open_alice(reader: Reader, library: Library, books_dir: Path, page: int = 3) -> TextView:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, page)
    view = text_view(reader)
    view.setFocus()
    QApplication.processEvents()
    return view


def with_columns(reader: Reader, columns: int) -> None:
    reader.set_typography(replace(reader.typography, layout="paged", columns=columns))
    QApplication.processEvents()


def column_texts(view: TextView) -> list[str]:
    out = []
    for column in view.pager.columns:
        cursor = QTextCursor(view.document())
        cursor.setPosition(column.first)
        cursor.setPosition(
            min(column.end, view.flow.end_position()), QTextCursor.MoveMode.KeepAnchor
        )
        out.append(cursor.selectedText().replace("\u2029", "\n"))
    return out


def assert_no_line_cut(view: TextView) -> None:
    """Every line of a column fits its clip; the next column starts with the first line left
    out, which is below the clip."""
    height = view.pager.page_height()
    for column in view.pager.columns:
        for line in lines_down(view.document(), column.first):
            if line.start >= column.end:
                assert line.top >= column.bottom - 0.5, "the first line left out is not drawn"
                break
            assert line.top >= column.top - 0.5
            assert line.top + line.height <= column.top + height + 0.5, "a line is cut"


@pytest.mark.parametrize("columns", [1, 2])
def test_fifty_turns_show_every_line_exactly_once(
    reader: Reader, library: Library, books_dir: Path, columns: int
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    with_columns(reader, columns)
    assert view.pager.paged and view.pager.column_count() == columns
    start = view.pager.screen_start()
    shown: list[str] = []
    page_texts: dict[int, str] = {}
    chain: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for turn in range(50):
        assert len(view.pager.columns) == columns
        assert_no_line_cut(view)
        shown.extend(column_texts(view))
        for column in view.pager.columns:
            chain.append(
                (
                    view.flow.page_offset(column.first),
                    view.flow.page_offset(min(column.end, view.flow.end_position())),
                )
            )
        first, last = view.pager.screen_pages()
        for page in range(first, last + 1):
            page_texts[page] = view.flow.page_text(page)
        press(view, FORWARD[turn % len(FORWARD)])
    for (_, end), (begin, _) in itertools.pairwise(chain):
        assert end == begin, "each column starts where the one before stopped"
    end = chain[-1][1]
    pages = range(start[0], end[0] + 1)
    expected = "\n".join(page_texts[p] for p in pages)
    tail = len(page_texts[end[0]]) - end[1]
    expected = expected[start[1] : len(expected) - tail]
    assert "".join(shown).split() == expected.split(), "no line skipped or repeated"
    assert reader.page > start[0] + 10


def test_turning_back_shows_the_same_screens_in_reverse(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    with_columns(reader, 2)
    seen = []
    for _ in range(8):
        seen.append(view.pager.screen_start())
        press(view, Qt.Key.Key_PageDown)
    for expected in reversed(seen):
        press(view, Qt.Key.Key_PageUp)
        assert view.pager.screen_start() == expected


def test_turning_back_from_a_jump_never_repeats_a_line(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    """A screen never seen going forwards is made backwards: it ends just before the line at
    the top, and turning on from it comes back to that line."""
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir, page=9)
    with_columns(reader, 2)
    here = view.pager.screen_start()
    press(view, Qt.Key.Key_PageUp)
    assert view.flow.page_offset(min(view.pager.columns[-1].end, view.flow.end_position())) == here
    assert_no_line_cut(view)
    press(view, Qt.Key.Key_PageDown)
    assert view.pager.screen_start() == here


def ink_in(image: Any, x0: int, x1: int, background: QColor) -> int:
    dark = 0
    for x in range(x0, x1, 3):
        for y in range(0, image.height(), 3):
            if abs(image.pixelColor(x, y).lightness() - background.lightness()) > 80:
                dark += 1
    return dark


def test_two_columns_appear_past_the_threshold_width(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(900, 700)
    view = open_alice(reader, library, books_dir)
    QApplication.processEvents()
    assert view.viewport().width() < TWO_COLUMNS_FROM
    assert view.pager.column_count() == 1 and len(view.pager.columns) == 1
    background = QColor(view.theme.background)
    image = view.viewport().grab().toImage()
    half = image.width() // 2
    assert ink_in(image, 0, half, background) > 0
    reader.resize(TWO_COLUMNS_FROM + 400, 700)
    QApplication.processEvents()
    assert view.viewport().width() >= TWO_COLUMNS_FROM
    assert view.pager.column_count() == 2 and len(view.pager.columns) == 2
    image = view.viewport().grab().toImage()
    half = image.width() // 2
    left, right = ink_in(image, 0, half, background), ink_in(image, half, image.width(), background)
    assert left > 100 and right > 100, "text drawn in both columns"
    assert abs(left - right) < max(left, right) * 0.6
    assert_no_line_cut(view)


def test_the_last_line_is_drawn_whole_and_nothing_below_it(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(900, 700)
    view = open_alice(reader, library, books_dir)
    column = view.pager.columns[0]
    clip_bottom = int(column.bottom - view.pager.offset_of(column))
    image = view.viewport().grab().toImage()
    background = QColor(view.theme.background)
    below = sum(
        1
        for x in range(0, image.width(), 2)
        for y in range(clip_bottom + 1, image.height())
        if abs(image.pixelColor(x, y).lightness() - background.lightness()) > 80
    )
    assert below == 0, "the next screen's first line is not peeking in"
    assert clip_bottom <= view.viewport().height() - PAD // 2


def test_click_zones_and_the_wheel_turn_pages(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    first = view.pager.screen_start()
    right = QPoint(view.viewport().width() - 5, view.viewport().height() // 2)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=right)
    second = view.pager.screen_start()
    assert second > first
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(5, 200))
    assert view.pager.screen_start() == first
    middle = QPointF(view.viewport().width() / 2, 200)
    for delta in (-120, -120, 120):
        event = QWheelEvent(
            middle,
            view.viewport().mapToGlobal(middle),
            QPoint(),
            QPoint(0, delta),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(view.viewport(), event)
    assert view.pager.screen_start() == second


def test_dragging_in_the_second_column_selects_its_words(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    with_columns(reader, 2)
    second = view.pager.columns[1]
    x = view.pager.column_width() + view.pager.side_margin + 2
    y = int(second.top - view.pager.offset_of(second)) + 4
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    QTest.mouseMove(vp, QPoint(x + 200, y + 60))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=QPoint(x + 200, y + 60))
    cursor = view.textCursor()
    assert cursor.hasSelection()
    assert second.first <= cursor.selectionStart() < cursor.selectionEnd() <= second.end
    assert view.pager.screen_start() == view.flow.page_offset(view.pager.columns[0].first), (
        "no page turned"
    )


def test_turning_from_the_last_page_read_is_reading_a_jump_is_not(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir, page=1)
    with_columns(reader, 2)
    assert reader.session is not None
    for _ in range(6):
        press(view, Qt.Key.Key_PageDown)
    assert reader.session.read_to == reader.page > 3, "two-page screens still count as reading"
    bound = reader.session.read_to
    reader.go_to_page(40)
    for _ in range(3):
        press(view, Qt.Key.Key_PageDown)
    assert reader.page > 40
    assert reader.session.read_to == bound, "turning after a jump is looking ahead"


def test_caret_browsing_selects_with_shift_arrows_and_follows_the_caret(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    with_columns(reader, 2)
    start = view.pager.screen_start()
    press(view, Qt.Key.Key_F7)
    assert view.caret_browsing
    press(view, Qt.Key.Key_Down)
    assert view.pager.screen_start() == start, "an arrow moves the caret, not the page"
    for _ in range(5):
        press(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert len(view.textCursor().selectedText()) == 5
    assert view.marks.selection_anchor() is not None
    for _ in range(200):
        press(view, Qt.Key.Key_Down)
        if view.pager.screen_start() != start:
            break
    assert view.pager.screen_start() != start, "the screen follows the caret past its end"
    assert view.pager.on_screen(view.textCursor().position())
    press(view, Qt.Key.Key_F7)
    assert not view.caret_browsing
    before = view.pager.screen_start()
    press(view, Qt.Key.Key_Down)
    assert view.pager.screen_start() != before, "without the caret the arrows turn pages again"


def test_scroll_stays_a_choice(reader: Reader, library: Library, books_dir: Path) -> None:
    view = open_alice(reader, library, books_dir)
    assert view.pager.paged, "paged by default"
    reader.set_typography(replace(reader.typography, layout="scroll"))
    QApplication.processEvents()
    assert not view.pager.paged and not view.pager.columns
    assert view.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded
    before = view.verticalScrollBar().value()
    press(view, Qt.Key.Key_PageDown)
    assert view.verticalScrollBar().value() > before


def test_a_selection_in_the_second_column_is_placed_where_it_is_drawn(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    with_columns(reader, 2)
    second = view.pager.columns[1]
    cursor = QTextCursor(view.document())
    cursor.setPosition(second.first + 40)
    rect = view.cursorRect(cursor)
    assert view.pager.column_width() <= rect.left() < view.viewport().width()
    assert 0 <= rect.top() < view.viewport().height()
    assert view.pager.cursor_at(rect.center()).position() in range(
        second.first + 38, second.first + 43
    )


def test_turning_back_after_a_resize_never_repeats_or_skips_a_line(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir)
    for _ in range(3):
        press(view, Qt.Key.Key_PageDown)
    reader.resize(1300, 600)
    QApplication.processEvents()
    here = view.pager.screen_start()
    press(view, Qt.Key.Key_PageUp)
    assert view.flow.page_offset(min(view.pager.columns[-1].end, view.flow.end_position())) == here
    assert_no_line_cut(view)


def test_the_layout_settings_are_checked_and_offered(qtbot: Any) -> None:
    from core.settings import ReaderSettings, parse_reader_settings
    from desktop.reader.reading_settings import ReadingSettings

    settings, problems = parse_reader_settings(
        {"layout": "scroll", "columns": 2, "caret_browsing": True}, "settings.toml"
    )
    assert (settings.layout, settings.columns, settings.caret_browsing) == ("scroll", 2, True)
    settings, problems = parse_reader_settings({"layout": "book", "columns": 3}, "settings.toml")
    assert settings.layout == "paged" and settings.columns == 0
    assert any("'reader.layout'" in p and '"paged" or "scroll"' in p for p in problems)
    assert any("'reader.columns'" in p for p in problems)
    dialog = ReadingSettings()
    qtbot.addWidget(dialog)
    dialog.set_values(ReaderSettings(), this_book=False, has_book=True)
    seen: list[ReaderSettings] = []
    dialog.changed.connect(lambda look, _only: seen.append(look))
    dialog.layout_box.setCurrentIndex(dialog.layout_box.findData("scroll"))
    dialog.columns.setCurrentIndex(dialog.columns.findData(1))
    dialog.caret.setChecked(True)
    assert (seen[-1].layout, seen[-1].columns, seen[-1].caret_browsing) == ("scroll", 1, True)


def test_the_first_and_last_screens_of_the_book_stop_the_turns(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    reader.resize(1300, 760)
    view = open_alice(reader, library, books_dir, page=1)
    assert view.pager.at_start() and not view.previous_screen()
    last = view.flow.page_count
    reader.go_to_page(last)
    QApplication.processEvents()
    for _ in range(10):
        press(view, Qt.Key.Key_PageDown)
    assert view.pager.at_end() and not view.next_screen()
    assert view.top_page() <= last and reader.page <= last
    end = view.pager.screen_start()
    press(view, Qt.Key.Key_PageUp)
    press(view, Qt.Key.Key_PageDown)
    assert view.pager.screen_start() == end
