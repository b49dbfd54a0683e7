"""How far the reader has read (core/reading.py's rule) through the real window: real clicks
on the contents and Find results, real Page Down, Alt+Left (Back) and Go to page presses, with
the window closed and the library opened again (a restart) in the middle of each sequence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QTreeWidgetItem

from core.app import Margin
from core.books.importer import import_book
from core.paths import resolve_paths
from desktop.reader.find_panel import LATER_ROLE
from tests.desktop.conftest import close_window, open_window

SIZE = (1600, 1000)  # two columns, as in the issue


class Session:
    """A window on a library that can be closed and started again."""

    def __init__(self, qtbot: Any, books_dir: Path) -> None:
        self.qtbot = qtbot
        self.margin = Margin.open(resolve_paths().ensure())
        self.book_id = import_book(
            self.margin.library, books_dir / "pride_and_prejudice.epub"
        ).book.id
        self.win = self._start(page=1)

    def _start(self, page: int | None = None) -> Any:
        win = open_window(self.margin, self.qtbot, SIZE)
        win.books.refresh_library()
        win.open_book(self.book_id, page)
        win.panes.set_side_visible(True)
        QApplication.processEvents()
        win.reader.view.setFocus()
        return win

    def restart(self) -> None:
        close_window(self.qtbot, self.win)  # the window saves where the reader is
        self.margin.close()
        self.margin = Margin.open(resolve_paths().ensure())
        self.win = self._start()

    def close(self) -> None:
        close_window(self.qtbot, self.win)
        self.margin.close()

    @property
    def reader(self) -> Any:
        return self.win.reader

    def read_to(self) -> int:
        self.reader.save_position()
        return int(self.margin.library.get_book(self.book_id).read_to)

    def key(self, key: Qt.Key, mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        QTest.keyClick(self.reader.view, key, mods)
        QApplication.processEvents()

    def page_down(self, times: int) -> tuple[int, int]:
        """Page Down ``times``: the first and last pages of the last screen turned past."""
        past = (0, 0)
        for _ in range(times):
            past = self.reader.view.pager.screen_pages()
            self.key(Qt.Key.Key_PageDown)
        return past

    def click_contents(self, title: str) -> None:
        tree = self.reader.toc
        found = tree.findItems(title, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)
        item: QTreeWidgetItem = found[0]
        self.reader.side.show_panel("Contents")
        tree.scrollToItem(item)
        QTest.mouseClick(
            tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center()
        )
        QApplication.processEvents()

    def click_find_result(self, words: str, after: int) -> int:
        """Find ``words`` and click the first result past page ``after``: its page."""
        self.reader.side.show_panel("Find")
        box = self.reader.find_box
        box.setFocus()
        box.clear()
        QTest.keyClicks(box, words)
        QTest.keyClick(box, Qt.Key.Key_Return)
        results = self.reader.find_results
        self.qtbot.waitUntil(lambda: results.count() > 0, timeout=5000)
        last = results.item(results.count() - 1)
        if last.data(LATER_ROLE):  # matches past where the reader has read are folded: open
            results.scrollToItem(last)
            rect = results.visualItemRect(last)
            QTest.mouseClick(results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            self.qtbot.waitUntil(lambda: not results.item(results.count() - 1).data(LATER_ROLE))
        matches = self.reader.side.finder.matches
        for row in range(min(results.count(), len(matches))):
            item = results.item(row)
            page = matches[row].page
            if page > after:
                results.scrollToItem(item)
                rect = results.visualItemRect(item)
                QTest.mouseClick(results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
                QApplication.processEvents()
                return page
        raise AssertionError(f"no result for {words!r} past p. {after}")

    def go_to(self, page: int) -> None:
        box = self.reader.page_box
        box.setFocus()
        box.selectAll()
        QTest.keyClicks(box, str(page))
        QTest.keyClick(box, Qt.Key.Key_Return)
        QApplication.processEvents()
        self.reader.view.setFocus()


@pytest.fixture
def session(qtbot: Any, books_dir: Path, real_font: str) -> Any:
    made = Session(qtbot, books_dir)
    yield made
    made.close()


def contents_then_read(s: Session, screens: int) -> tuple[int, int]:
    """Contents → Chapter I (after the title page and imprint), then ``screens`` Page Downs."""
    s.click_contents("I")
    assert s.reader.page == 3
    return s.page_down(screens)


@pytest.mark.parametrize("restart", [False, True])
def test_contents_then_reading_on_reads(session: Session, restart: bool) -> None:
    session.click_contents("I")
    assert session.reader.page == 3 and session.read_to() == 1, "the jump reads nothing"
    assert "Looking ahead" not in session.reader.footer.plain_text()
    if restart:
        session.restart()
        assert session.reader.page == 3
    past = session.page_down(4)
    assert past[1] > past[0] or past[1] >= 6, "two columns: a screen shows several pages"
    assert session.read_to() == max(past[1], session.reader.page) > 3, (
        "▶ Contents → Chapter I, Page Down ×4 left read_to at p. 1"
    )


@pytest.mark.parametrize("restart", [False, True])
def test_a_search_hit_two_hundred_pages_on_then_turning_pages(
    session: Session, restart: bool
) -> None:
    contents_then_read(session, 2)
    bound = session.read_to()
    assert bound > 3
    hit = session.click_find_result("Pemberley", after=bound + 200)
    assert session.reader.page >= hit - 1
    session.page_down(2)
    if restart:
        session.restart()
        assert session.reader.page > bound + 200
    session.page_down(3)
    assert session.read_to() == bound, "looking ahead: turning pages there is no reading"
    assert "Looking ahead" in session.reader.footer.plain_text()
    session.reader.read_to_button.click()
    assert session.read_to() == session.reader.page


@pytest.mark.parametrize("restart", [False, True])
def test_a_jump_two_screens_on_then_five_screens_read(session: Session, restart: bool) -> None:
    contents_then_read(session, 1)
    first, last = session.reader.view.pager.screen_pages()
    landing = last + 2 * (last - first + 1) - 1  # two screens further on
    session.go_to(landing)
    assert session.reader.page == landing
    before = session.read_to()
    if restart:
        session.restart()
    past = session.page_down(5)
    assert session.read_to() == max(past[1], session.reader.page) > landing, (
        f"▶ a short jump then reading on left read_to at p. {before}"
    )


@pytest.mark.parametrize("restart", [False, True])
def test_back_after_looking_ahead_then_reading_on(session: Session, restart: bool) -> None:
    contents_then_read(session, 2)
    stopped_page = session.reader.page
    bound = session.read_to()
    session.click_find_result("Pemberley", after=bound + 200)
    session.page_down(2)
    session.key(Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # Back
    assert session.reader.page == stopped_page
    assert session.read_to() == bound
    if restart:
        session.restart()
        assert session.reader.page == stopped_page
    past = session.page_down(2)
    assert session.read_to() == max(past[1], session.reader.page) > bound


def test_turning_past_a_two_column_screen_reads_its_last_line(session: Session) -> None:
    session.reader.read_to_button.click()  # read to p. 1 on purpose, then read on
    raised = []
    for _ in range(6):
        first, last = session.reader.view.pager.screen_pages()
        session.key(Qt.Key.Key_PageDown)
        raised.append((first, last, session.read_to()))
    assert all(bound >= last for _, last, bound in raised), raised
    assert any(last > first for first, last, _ in raised), "a screen shows more than a page"
