"""Printed page numbers from an EPUB's page-list (issue 29, item 7): the footer names the
printed page beside Margin's, and Go to page takes "p. 40" as the paper book's page 40."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QInputDialog

from core.books.importer import import_book
from desktop.reader.pages import PageLabels
from desktop.window.main_window import MainWindow
from tests.core.books.test_epub_w3c import _page_list_book
from tests.desktop.conftest import close_window
from tests.support.shots import save_shot


def test_labels_find_a_printed_page_or_a_screen_page() -> None:
    labels = PageLabels(["1", "38", "38", "39", "40", "40"])
    assert labels.find("p. 40", 6) == 5
    assert labels.find("p40", 6) == 5
    assert labels.find("4", 6) == 4  # a bare number is Margin's page
    assert labels.find("p. 41", 6) is None
    assert labels.find("9", 6) is None


def test_the_footer_names_the_printed_page_and_go_to_takes_it(
    app: Any, qtbot: Any, real_font: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = MainWindow(app, restore=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        book = import_book(app.library, _page_list_book(tmp_path)).book
        window.open_book(book.id, 1)
        qtbot.waitUntil(lambda: "in print" in window.reader.footer.plain_text())
        assert "p. 1 of" in window.reader.footer.plain_text()
        assert "(p. 38 in print)" in window.reader.footer.plain_text()
        typed = {"text": "p. 40"}
        monkeypatch.setattr(
            QInputDialog, "getText", staticmethod(lambda *a, **k: (typed["text"], True))
        )
        window.books.go_to_page_dialog()
        forty = next(
            p.number
            for p in app.library.pages(book.id, 1, book.page_count)
            if p.text.startswith("Two")
        )
        qtbot.waitUntil(lambda: window.reader.page == forty)
        QApplication.processEvents()
        assert "(p. 40 in print)" in window.reader.footer.plain_text()
        for theme in ("light", "dark"):
            window.reader.set_theme(theme)
            QApplication.processEvents()
            save_shot(window.grab(), f"printed-page-{theme}.png")
        typed["text"] = "p. 99"
        window.books.go_to_page_dialog()
        assert window.reader.page == forty
        assert "no page" in window.statusBar().currentMessage()
    finally:
        close_window(qtbot, window)
