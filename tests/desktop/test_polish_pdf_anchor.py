"""A PDF highlight made from a selection stores the occurrence selected, not the first one of
its words on the page (issue 28 leftover; as threads do, desktop/highlights/margin_marks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from core.store.library import Library
from tests.desktop.pdf_drag import PAGE, PHRASE, drag_over_words, open_pdf, twice_pdf
from tests.desktop.reader.conftest import alice_window


def test_highlighting_the_second_of_two_equal_sentences_in_a_pdf_stores_the_second(
    library: Library,
    pdf_dir: Path,
    books_dir: Path,
    qtbot: Any,
    real_font: str,
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("", True)))
    book, stored, first, second = twice_pdf(library, pdf_dir)
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        win.resize(1200, 900)
        view = open_pdf(win, book, qtbot)
        drag_over_words(view, PAGE, PHRASE, stored, second)
        qtbot.waitUntil(win.reader.selection_bar.isVisible, timeout=3000)
        qtbot.keyClick(win, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: len(library.list_highlights(book.id)) == 1, timeout=3000)
        [saved] = library.list_highlights(book.id)
        assert saved.quote is not None
        assert (saved.quote.page, saved.quote.exact) == (PAGE, PHRASE)
        assert saved.quote.start == second != first, "the occurrence selected, not the first"
