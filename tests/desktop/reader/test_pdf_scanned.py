"""PDFs a viewer opens open in Margin: a book of scanned pages (pictures only) opens and turns
its pages, the chat says the assistant cannot read them; a protected PDF asks for its
password in a dialog (typed with real keys), says plainly when it is wrong, and the page
view opens it again in the same session without asking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader import password_dialog
from desktop.reader.pdf_view import PdfView
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window
from tests.support.imagepdf import page_colour


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(1100, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    password_dialog._session.clear()
    close_window(qtbot, win)


def _centre_colour(view: PdfView, qtbot: Any) -> QColor:
    qtbot.waitUntil(lambda: view.image_for(view.current - 1) is not None, timeout=5000)
    image = view.image_for(view.current - 1)
    assert image is not None
    return image.pixelColor(image.width() // 2, image.height() * 3 // 4)


def test_scanned_pdf_opens_turns_pages_and_the_chat_says_it_cannot_read_them(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    from tests.support.imagepdf import make_image_pdf

    book = import_book(library, make_image_pdf(tmp_path / "scanned.pdf", 4)).book
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, PdfView)
    view.settle()  # fit to width: a page is taller than the screen
    seen = [(1, _centre_colour(view, qtbot))]
    for target in (2, 3, 4):
        for _ in range(6):  # screen by screen with the space bar
            QTest.keyClick(view, Qt.Key.Key_Space)
            QApplication.processEvents()
            if window.reader.page == target:
                break
        assert window.reader.page == target
        seen.append((target, _centre_colour(view, qtbot)))
    for page, colour in seen:
        want = page_colour(page - 1)
        got = (colour.red(), colour.green(), colour.blue())
        assert all(abs(g - w) < 40 for g, w in zip(got, want, strict=True)), (page, got, want)
    QTest.keyClick(view, Qt.Key.Key_PageUp)
    QApplication.processEvents()
    assert window.reader.page == 3
    notice = window.chat.pictures
    qtbot.waitUntil(notice.isVisible, timeout=5000)
    assert "cannot read these pages" in notice.text.text()
    assert "pictures without text" in notice.text.text()


def test_pages_with_text_say_nothing(
    window: Any, library: Library, pdf_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    window.open_book(book.id, 1)
    qtbot.wait(300)
    assert not window.chat.pictures.isVisible()


def _dialog(qtbot: Any) -> QInputDialog:
    found: list[QInputDialog] = []

    def shown() -> bool:
        found[:] = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QInputDialog) and w.objectName() == "pdfPassword" and w.isVisible()
        ]
        return bool(found)

    qtbot.waitUntil(shown, timeout=10000)
    return found[0]


def _type_password(qtbot: Any, text: str) -> str:
    dialog = _dialog(qtbot)
    prompt = dialog.labelText()
    field = dialog.findChild(QLineEdit)
    assert field is not None and field.echoMode() == QLineEdit.EchoMode.Password
    field.setFocus()
    QTest.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    return prompt


def test_protected_pdf_asks_for_its_password_and_says_when_it_is_wrong(
    window: Any, library: Library, pdf_dir: Path, qtbot: Any
) -> None:
    window.books.import_files([pdf_dir / "libreoffice-writer-password.pdf"])
    first = _type_password(qtbot, "wrong-one")
    assert "is protected by a password" in first
    second = _type_password(qtbot, "openpassword")
    assert "password for “libreoffice-writer-password.pdf” is wrong" in second
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=20000)
    view = window.reader.view
    assert isinstance(view, PdfView) and view.page_count == 1
    assert "Lorem ipsum" in library.page(window.reader.book.id, 1).text
    book_id = window.reader.book.id
    # the page view opens it again in this session without asking
    window.reader.close_book()
    window.open_book(book_id, 1)
    assert isinstance(window.reader.view, PdfView)
    # a new session does not know it: the view asks, and opens with it
    window.reader.close_book()
    password_dialog._session.clear()
    assert window.open_book(book_id, 1) is None
    _type_password(qtbot, "openpassword")
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=5000)
    assert isinstance(window.reader.view, PdfView)


def test_cancelling_the_password_adds_nothing_and_says_why(
    window: Any, library: Library, pdf_dir: Path, qtbot: Any
) -> None:
    window.books.import_files([pdf_dir / "libreoffice-writer-password.pdf"])
    dialog = _dialog(qtbot)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.library_panel.error.isVisible(), timeout=10000)
    text = window.library_panel.error.text()
    assert "was not added: it is protected by a password, and none was given" in text
    assert library.list_books() == []
