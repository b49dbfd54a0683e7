"""Ruby readings are drawn over their base in the page view (issue 45, item 2), and not at
all when the reader sets ``[reader] ruby = "off"``; the view's text holds only the base."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtGui import QTextCursor

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader, text_view
from tests.support.shots import save_shot

# ruby over Latin letters (the suite's fonts have no kana): the same markup as Aozora's
PAGE = (
    "<p>First line of the page, long enough to stand above the next one.</p>"
    "<p>They went to <ruby><rb>Kamakura</rb><rp>(</rp><rt>KA-MA-KU-RA</rt><rp>)</rp></ruby>"
    " by the sea, and stayed there all summer long.</p>"
)


def ink_above(view: TextView, word: str) -> int:
    """Dark pixels in the band just above ``word`` on screen."""
    found = view.document().find(word)
    assert not found.isNull()
    start, end = QTextCursor(found), QTextCursor(found)
    start.setPosition(found.selectionStart())
    end.setPosition(found.selectionEnd())
    left, right = view.cursorRect(start), view.cursorRect(end)
    image = view.viewport().grab().toImage()
    band = max(6, left.height() // 2)
    count = 0
    for y in range(max(0, left.top() - band), left.top() + 2):
        for x in range(left.left() + 2, right.left() - 2):
            if image.pixelColor(x, y).lightness() < 128:
                count += 1
    return count


def test_the_reading_is_drawn_over_its_base(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, make_epub(tmp_path / "r.epub", [("Sea", PAGE)])).book
    assert "went to Kamakura by the sea" in library.page(book.id, 1).text
    _reader, view = open_reader(library, qtbot, book, (900, 500))
    assert "KA-MA-KU-RA" not in view.toPlainText()
    qtbot.waitUntil(lambda: ink_above(view, "Kamakura") > 40, timeout=5000)
    save_shot(view.viewport().grab(), "ruby-light.png")
    # the words beside it have no reading: only a stray descender of the line above
    assert ink_above(view, "by the sea") < 10


def test_no_reading_is_drawn_when_the_reader_turns_them_off(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, make_epub(tmp_path / "r.epub", [("Sea", PAGE)])).book
    reader = Reader(library)
    qtbot.addWidget(reader)
    reader.resize(900, 500)
    reader.typography = replace(reader.typography, ruby="off")
    reader.show()
    qtbot.waitExposed(reader)
    reader.open_book(book, 1)
    view = text_view(reader)
    qtbot.wait(300)
    assert view.typography.ruby == "off"
    assert ink_above(view, "Kamakura") < 10  # (KA-MA-KU-RA draws well over 40)
