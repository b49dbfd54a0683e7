"""Text recognition from the window: the chat's line about pictures offers it when tesseract
is installed (a real click), shows its progress, and the book's pages are then searchable
(Find in book) — or a Stop leaves the book as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.books import ocr
from core.books.importer import import_book
from core.store.library import Library
from tests.desktop.conftest import close_window, open_window
from tests.support.imagepdf import scan_of
from tests.support.pdfgen import make_text_pdf


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = open_window(app, qtbot, (1200, 800))
    yield win
    close_window(qtbot, win)


def _scan(library: Library, tmp_path: Path) -> int:
    text = make_text_pdf(tmp_path / "t.pdf", ["The lighthouse keeper counted forty ships."])
    return import_book(library, scan_of(text, tmp_path / "scan.pdf")).book.id


@pytest.mark.skipif(not ocr.available(), reason="tesseract is not installed")
@pytest.mark.timeout(600)
def test_recognise_the_text_with_a_click(
    window: Any, library: Library, tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr, "DPI", 150)  # the machine may be busy: a quicker page
    book_id = _scan(library, tmp_path)
    window.open_book(book_id, 1)
    notice = window.chat.pictures
    qtbot.waitUntil(lambda: notice.isVisible() and notice.ocr_button.isVisible(), timeout=5000)
    QTest.mouseClick(notice.ocr_button, Qt.MouseButton.LeftButton)
    assert notice.stop_button.isVisible() and not notice.ocr_button.isVisible()
    qtbot.waitUntil(lambda: "Text found on 1 page" in notice.progress.text(), timeout=300000)
    assert "lighthouse keeper" in library.page(book_id, 1).text.lower()
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=5000)
    assert "lighthouse" in window.reader.page_texts()[0][1].lower(), "Find sees the new text"
    qtbot.waitUntil(lambda: not notice.text.text(), timeout=5000)  # no picture pages left


def test_no_offer_without_tesseract(
    window: Any, library: Library, tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    book_id = _scan(library, tmp_path)
    window.open_book(book_id, 1)
    notice = window.chat.pictures
    qtbot.waitUntil(notice.isVisible, timeout=5000)
    assert "cannot read these pages" in notice.text.text()
    assert not notice.ocr_button.isVisible()


def test_stop_leaves_the_book_as_it_was(
    window: Any, library: Library, tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    def slow(picture: object, **_: object) -> str:
        time.sleep(0.5)
        return "never kept"

    monkeypatch.setattr(ocr, "engine", lambda: "/usr/bin/true")  # offered
    monkeypatch.setattr(ocr, "recognise_file", slow)
    book_id = _scan(library, tmp_path)
    window.open_book(book_id, 1)
    notice = window.chat.pictures
    qtbot.waitUntil(lambda: notice.ocr_button.isVisible(), timeout=5000)
    QTest.mouseClick(notice.ocr_button, Qt.MouseButton.LeftButton)
    QTest.mouseClick(notice.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: "Stopped: the pages are as they were" in notice.progress.text(), timeout=10000
    )
    assert library.page(book_id, 1).text == ""
