"""A PDF highlight made from a selection stores the occurrence selected, not the first one of
its words on the page (issue 28 leftover; as threads do, desktop/reader/margin_marks.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.pdf_view import PdfView
from tests.desktop.pdf_drag import drag_over_words
from tests.desktop.reader.conftest import alice_window

PHRASE = "Is there a difference between this text and some nonsense like “Huardest gefburn”?"
PAGE = 2  # it stands there twice (tests/desktop/threads/test_pdf_marks.py)


def test_highlighting_the_second_of_two_equal_sentences_in_a_pdf_stores_the_second(
    library: Library,
    pdf_dir: Path,
    books_dir: Path,
    qtbot: Any,
    real_font: str,
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("", True)))
    book = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    stored = library.page(book.id, PAGE).text
    pattern = r"\s+".join(re.escape(w) for w in PHRASE.split())
    first, second = [m.start() for m in re.finditer(pattern, stored)][:2]
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        win.resize(1200, 900)
        win.open_book(book.id, PAGE)
        view = win.reader.view
        assert isinstance(view, PdfView)
        qtbot.waitUntil(view.is_drawn, timeout=10000)
        drag_over_words(view, PAGE, PHRASE, stored, second)
        qtbot.waitUntil(win.reader.selection_bar.isVisible, timeout=3000)
        qtbot.keyClick(win, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: len(library.list_highlights(book.id)) == 1, timeout=3000)
        [saved] = library.list_highlights(book.id)
        assert saved.quote is not None
        assert (saved.quote.page, saved.quote.exact) == (PAGE, PHRASE)
        assert saved.quote.start == second != first, "the occurrence selected, not the first"
