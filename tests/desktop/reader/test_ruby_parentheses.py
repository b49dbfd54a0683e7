"""Ruby in parentheses (issue 45, item 2): with ``[reader] ruby = "parentheses"`` each reading
follows its word as "（reading）" in the word's size, drawn in room the view makes after the
base, so the view's text (what highlights, search hits and positions are measured in) still
holds only the base. The passage is the opening of Sōseki's *Kokoro* from the fixtures
(tests/fixtures/books/kokoro_excerpt.txt), with Aozora Bunko's ruby markup on three words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtGui import QFontMetricsF, QTextCursor

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from desktop.reader.reading_settings import ReadingSettings
from desktop.reader.ruby_paint import CLOSE, OPEN
from desktop.reader.text_view import TextView
from desktop.reader.typography import Typography
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import text_view
from tests.support.shots import save_shot

FIXTURE = Path(__file__).parents[2] / "fixtures" / "books" / "kokoro_excerpt.txt"
RUBY = {"先生": "せんせい", "憚": "はば", "鎌倉": "かまくら"}


def kokoro_page() -> tuple[str, str]:
    """The fixture's first paragraph as a page with ruby, and its text without readings."""
    text = FIXTURE.read_text(encoding="utf-8").split("\n")[0][:160]
    marked = text
    for base, reading in RUBY.items():
        marked = marked.replace(
            base, f"<ruby><rb>{base}</rb><rp>（</rp><rt>{reading}</rt><rp>）</rp></ruby>"
        )
    return f"<p>{marked}</p>", text


def open_with(library: Library, qtbot: Any, tmp_path: Path, ruby: str) -> tuple[str, TextView]:
    page, text = kokoro_page()
    book = import_book(library, make_epub(tmp_path / "k.epub", [("一", page)])).book
    reader = Reader(library)
    qtbot.addWidget(reader)
    reader.resize(900, 600)
    reader.typography = replace(reader.typography, ruby=ruby)
    reader.show()
    qtbot.waitExposed(reader)
    reader.open_book(book, 1)
    return text, text_view(reader)


def advance(view: TextView, offset: int) -> float:
    """How far the pen moves over the character at ``offset`` (its gap included)."""
    cursor = QTextCursor(view.document())
    cursor.setPosition(offset)
    left = view.cursorRect(cursor).left()
    cursor.setPosition(offset + 1)
    return float(view.cursorRect(cursor).left() - left)


def ink(view: TextView, x1: int, x2: int, top: int, bottom: int) -> int:
    image = view.viewport().grab().toImage()
    return sum(
        image.pixelColor(x, y).lightness() < 128
        for x in range(x1, x2)
        for y in range(max(0, top), bottom)
    )


def test_the_reading_follows_its_word_in_parentheses(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    text, view = open_with(library, qtbot, tmp_path, "parentheses")
    assert "せんせい" not in view.toPlainText() and "先生" in view.toPlainText()
    start = view.toPlainText().index("先生")
    assert view.toPlainText()[start : start + 20] == text[text.index("先生") :][:20]
    # the room after 生 holds "（せんせい）" at the text's size; 先 keeps its own width
    cursor = QTextCursor(view.document())
    cursor.setPosition(start + 1)
    metrics = QFontMetricsF(cursor.charFormat().font())
    wide = metrics.horizontalAdvance(OPEN + "せんせい" + CLOSE)
    qtbot.waitUntil(lambda: advance(view, start + 1) >= advance(view, start) + wide - 2)
    assert advance(view, start) < wide / 2
    cursor.setPosition(start + 2)
    gap = view.cursorRect(cursor)
    right = gap.left()
    left = right - int(wide) + 2
    qtbot.waitUntil(lambda: ink(view, left, right - 1, gap.top(), gap.bottom()) > 60)
    save_shot(view.viewport().grab(), "ruby-parentheses.png")
    # nothing over the word: the reading is beside it, not above
    cursor.setPosition(start)
    above = view.cursorRect(cursor)
    assert ink(view, above.left() + 1, right, above.top() - above.height() // 2, above.top()) < 10


def test_above_makes_no_room_beside_the_word(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    _, view = open_with(library, qtbot, tmp_path, "above")
    start = view.toPlainText().index("先生")
    qtbot.wait(100)
    assert abs(advance(view, start + 1) - advance(view, start)) <= 1


def test_the_settings_window_offers_the_three_ways(qtbot: Any) -> None:
    dialog = ReadingSettings()
    qtbot.addWidget(dialog)
    choices = [dialog.ruby.itemData(i) for i in range(dialog.ruby.count())]
    assert choices == ["above", "parentheses", "off"]
    seen: list[Typography] = []
    dialog.changed.connect(lambda look, _only: seen.append(look))
    dialog.set_values(replace(Typography(), ruby="off"), this_book=False, has_book=True)
    assert dialog.values().ruby == "off"  # a change elsewhere keeps the reader's choice
    dialog.ruby.setCurrentIndex(1)
    assert seen[-1].ruby == "parentheses"
