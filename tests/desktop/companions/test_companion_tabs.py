"""The X-Ray and story-so-far tabs in the window, driven by real clicks and keys: what they
show stays within the bound, a page link jumps there, "Who is this?" opens a name's entry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTextBrowser

from core.books.importer import import_book
from core.store.library import Library
from tests.desktop.reader.conftest import press, text_view

SHOTS = Path(os.environ.get("MARGIN_SHOTS", "/work/wt/shots/companions"))


@contextmanager
def window_at(library: Library, books_dir: Path, qtbot: Any, read_to: int) -> Iterator[Any]:
    from core.app import Margin
    from desktop.main_window import MainWindow
    from tests.desktop.conftest import close_window

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, read_to)
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(1300, 850)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id)
        win.set_side_visible(True)
        yield win, book
    finally:
        close_window(qtbot, win)


def click_tab(win: Any, name: str) -> None:
    side = win.reader.side
    index = next(i for i in range(side.count()) if side.tabText(i) == name)
    bar = side.tabBar()
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def links(view: QTextBrowser) -> list[tuple[str, int]]:
    """(href, position) of every link in a browser's document."""
    found: list[tuple[str, int]] = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            href = fragment.charFormat().anchorHref()
            if href:
                found.append((href, fragment.position() + 1))
            it += 1
        block = block.next()
    return found


def click_link(view: QTextBrowser, position: int) -> None:
    cursor = QTextCursor(view.document())
    cursor.setPosition(position)
    view.ensureCursorVisible()
    rect = view.cursorRect(cursor)
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.x() + 2, rect.center().y())
    )


def shoot(win: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for theme in ("light", "dark"):
        win.set_theme(theme)
        QTest.qWait(50)
        win.grab().save(str(SHOTS / f"{name}_{theme}.png"))
    win.set_theme("light")


def test_xray_tab_bounded_clickable_and_who_is_this(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with window_at(library, books_dir, qtbot, 30) as (win, book):
        click_tab(win, "X-Ray")
        panel = win.reader.side.panel("X-Ray")
        qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
        names = [panel.list.item(i).text() for i in range(panel.list.count())]
        assert names[0].startswith("Alice — ")
        assert not [n for n in names if n.startswith("Hatter")]  # first named on p. 43
        assert "pages 1–30" in panel.status.text()
        pages = [int(h.split(":")[1].split("?")[0]) for h, _ in links(panel.detail)]
        assert pages and max(pages) <= 30
        # choose the Rabbit with the keyboard, then click one of its pages
        panel.filter.setFocus()
        QTest.keyClicks(panel.filter, "rabb")
        visible = [panel.list.item(i) for i in range(panel.list.count())]
        visible = [i for i in visible if not i.isHidden()]
        assert [i.text().split(" — ")[0] for i in visible] == ["Rabbit"]
        panel.list.setCurrentItem(visible[0])
        shoot(win, "xray")
        href, position = [x for x in links(panel.detail) if "mark=" in x[0]][-1]
        target = int(href.split(":")[1].split("?")[0])
        click_link(panel.detail, position)
        qtbot.waitUntil(lambda: win.reader.page == target, timeout=5000)
        # a name selected in the book, then Ctrl+Shift+X: its entry
        view = text_view(win.reader)
        cursor = view.document().find("Alice", view.textCursor())
        assert not cursor.isNull()
        view.setTextCursor(cursor)
        view.setFocus()
        panel.list.setCurrentRow(3)
        press(
            view,
            Qt.Key.Key_X,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
        assert panel.list.currentItem().text().startswith("Alice — ")
        assert win.reader.side.current_name() == "X-Ray"
        # the reader lowers the bound: the tab never shows a page after it
        library.set_read_to(book.id, 10)
        win.reader.book = library.get_book(book.id)
        panel.refresh()
        qtbot.waitUntil(lambda: panel.bound == 10, timeout=10000)
        assert not [
            i for i in range(panel.list.count()) if panel.list.item(i).text().startswith("Dodo")
        ]
        for i in range(panel.list.count()):
            panel.list.setCurrentRow(i)
            hrefs = [h for h, _ in links(panel.detail)]
            assert max(int(h.split(":")[1].split("?")[0]) for h in hrefs) <= 10


def test_story_so_far_tab(library: Library, books_dir: Path, qtbot: Any, real_font: str) -> None:
    with window_at(library, books_dir, qtbot, 33) as (win, _book):
        click_tab(win, "Story so far")
        panel = win.reader.side.panel("Story so far")
        qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
        text = panel.view.toPlainText()
        assert "CHAPTER I. Down the Rabbit-Hole" in text
        assert "CHAPTER IV" in text and "You are here: read to p. 33" in text
        assert "CHAPTER VI" not in text  # starts after the bound
        shoot(win, "recap")
        href, position = links(panel.view)[1]
        click_link(panel.view, position)
        target = int(href.split(":")[1].split("?")[0])
        qtbot.waitUntil(lambda: win.reader.page == target, timeout=5000)
