"""The footer fits its line to the room it has (issue 32 leftover: "min left in chapter" was cut
at 1024 px with the side panel open): a long chapter title is shortened, then dropped, and
so on down to the page; the tooltip and the accessible name keep every word."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from desktop.reader.footer import Footer
from tests.core.books.epubgen import make_epub
from tests.desktop.conftest import close_window, open_window

LONG = "Chapter II. The First Day's Journey, and the First Evening's Adventures; with Their Consequences"
WORDS = "<p>" + "Mr. Pickwick walked on through the town, thinking of the coach. " * 30 + "</p>"


def open_pickwick(app: Any, qtbot: Any, tmp_path: Path, size: tuple[int, int], read: bool) -> Any:
    """A window of ``size`` with the side panel and the chat open, a book whose chapter title
    is long at a page inside that chapter (read up to there, or looking ahead when not)."""
    path = make_epub(
        tmp_path / "pickwick.epub",
        [("Chapter I. The Pickwickians", WORDS * 4), (LONG, WORDS * 12), ("Chapter III.", WORDS)],
    )
    book = import_book(app.library, path).book
    chapter = next(t for t in app.library.toc(book.id) if "Chapter II." in t.title)
    page = chapter.page + 1
    app.library.set_position(book.id, page if read else 1)
    window = open_window(app, qtbot, size)
    window.open_book(book.id, page)
    window.panes.set_side_visible(True)
    QApplication.processEvents()
    assert window.chat.isVisible() and window.reader.side.isVisible()
    return window


def fits(footer: Footer) -> bool:
    """The line the footer shows is no wider than the footer (its bold note measured bold)."""
    return footer.sizeHint().width() <= footer.width()


def accessible_name(footer: Footer) -> str:
    return QAccessible.queryAccessibleInterface(footer).text(QAccessible.Text.Name)


@pytest.fixture
def window_1024(app: Any, qtbot: Any, real_font: str, tmp_path: Path) -> Any:
    window = open_pickwick(app, qtbot, tmp_path, (1024, 700), read=True)
    yield window
    close_window(qtbot, window)


def test_at_1024_the_chapter_title_gives_way_to_the_time_left(window_1024: Any) -> None:
    footer = window_1024.reader.footer
    text = footer.text()
    assert fits(footer), text
    assert text.endswith("min left in chapter") and "p. 6 of" in text and "%" in text
    assert "…" in text and "Chapter II. The First" in text, "the title shortened, not gone"
    full = footer.plain_text()
    assert LONG in full and full in footer.toolTip()
    assert accessible_name(footer) == full, "a screen reader hears every word"


def test_narrower_still_it_drops_words_down_to_the_page(window_1024: Any, qtbot: Any) -> None:
    reader = window_1024.reader
    footer = Footer()
    qtbot.addWidget(footer)
    footer.show()
    footer.show_progress(reader.session, LONG, reader.chapters)
    seen = []
    for width in range(600, 90, -10):
        footer.resize(width, 24)
        assert fits(footer), (width, footer.text())
        assert footer.toolTip() == footer.plain_text(), "shortened: the tooltip has it all"
        seen.append(footer.text())
    page = re.compile(r"^p\. 6 of \d+")
    assert any("Chapter II. The…" in t and t.endswith("min left in chapter") for t in seen)
    assert any(page.match(t) and t.endswith("min left in chapter") for t in seen)
    assert any(page.match(t) and "%" not in t and t.endswith(" min left") for t in seen)
    assert re.fullmatch(r"p\. 6 of \d+", seen[-1]), "the page is the last thing to go"
    assert not any(t.endswith("…") for t in seen), "words are dropped whole, the title aside"
    footer.resize(2000, 24)
    assert footer.text() == footer.plain_text() and footer.toolTip() == ""


def test_looking_ahead_keeps_the_note_and_the_page(
    app: Any, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    window = open_pickwick(app, qtbot, tmp_path, (1024, 700), read=False)
    try:
        footer = window.reader.footer
        assert footer.looking_ahead()
        assert fits(footer)
        shown = QAccessible.queryAccessibleInterface(footer).text(QAccessible.Text.Name)
        assert shown.startswith("Looking ahead — the assistant still stops at p. 1")
        assert "p. 6 of" in footer.text() and "Chapter II" not in footer.text()
        assert "<b>Looking ahead" in footer.text()
        assert LONG in footer.toolTip() and "Read to here" in footer.toolTip()
    finally:
        close_window(qtbot, window)


def test_at_1920_everything_shows(app: Any, qtbot: Any, real_font: str, tmp_path: Path) -> None:
    window = open_pickwick(app, qtbot, tmp_path, (1920, 1080), read=True)
    try:
        footer = window.reader.footer
        assert footer.text() == footer.plain_text() and LONG in footer.text()
        assert footer.text().endswith("about 16 min left in chapter") and fits(footer)
        assert footer.toolTip() == ""
    finally:
        close_window(qtbot, window)
