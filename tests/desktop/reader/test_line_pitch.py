"""A "⸺" (two-em dash) does not loosen its paragraph (issue 39, item 7): the body font lacks
the glyph, Qt draws it from a fallback font with a taller ascent and descent, and the lines of
that paragraph must keep the pitch of every other paragraph, as calibre keeps it. Measured on
Pride and Prejudice's own layout in the reader."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from PySide6.QtGui import QFontDatabase, QTextBlock
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.reader import Reader
from tests.conftest import FIXTURES
from tests.desktop.reader.conftest import text_view

DASH = "\u2e3a"


@pytest.fixture
def dash_fallback(real_font: str) -> Iterator[str]:
    """A font with the dash for Qt to fall back on: the test fonts (DejaVu) have none."""
    font_id = QFontDatabase.addApplicationFont(
        str(FIXTURES / "fonts" / "SourceSerif4-Regular.ttf.woff2")
    )
    if font_id < 0:
        pytest.skip("Qt cannot read the WOFF2 fixture font here: no font draws U+2E3A")
    try:
        yield QFontDatabase.applicationFontFamilies(font_id)[0]
    finally:
        QFontDatabase.removeApplicationFont(font_id)


def pitches(block: QTextBlock) -> list[float]:
    layout = block.layout()
    tops = [layout.lineAt(i).y() for i in range(layout.lineCount())]
    return [b - a for a, b in itertools.pairwise(tops)]


def test_a_two_em_dash_keeps_its_paragraphs_line_pitch(
    dash_fallback: str, reader: Reader, library: Library, books_dir: Any, real_font: str
) -> None:
    book = import_book(library, books_dir / "pride_and_prejudice.epub").book
    page = next(n for n, text in library.page_texts(book.id) if DASH in text)
    reader.resize(700, 900)  # a narrow column: the paragraphs wrap over many lines
    # the body in the test serif (Source Serif 4, now installed, would otherwise be chosen)
    reader.set_typography(replace(reader.typography, font_family=real_font))
    reader.open_book(book, page)
    QApplication.processEvents()
    view = text_view(reader)
    doc = view.document()
    dashed = doc.find(DASH).block()
    assert dashed.isValid() and dashed.layout().lineCount() >= 2
    plain = [
        block
        for block in (doc.findBlockByNumber(n) for n in range(doc.blockCount()))
        if DASH not in block.text()
        and block.layout().lineCount() >= 3
        and block.blockFormat().headingLevel() == 0
    ]
    assert plain, "no other paragraph of three lines or more on the pages loaded"
    body = plain[0].layout().lineAt(0)
    line = dashed.layout().lineAt(0)
    # the fallback took part: the dashed paragraph's lines are taller than the body's
    assert line.ascent() + line.descent() > body.ascent() + body.descent() + 1, (
        f"{dash_fallback} was not used for the dash: nothing to measure"
    )
    normal = pitches(plain[0])[0]
    for pitch in pitches(dashed):
        assert abs(pitch - normal) < 0.1, (
            f"▶ the paragraph with ⸺ is spaced {pitch:.1f} px a line, the others {normal:.1f}"
        )
