"""The book page as a screen reader meets it: a read-only text it can move through, not a
label (issue 28 leftover; desktop/reader/readable_text.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book


def test_the_book_page_is_a_read_only_document_not_a_label(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(window.library, books_dir / "alice_in_wonderland.epub").book
    window.books.refresh_library()
    window.open_book(book.id, 3)
    QApplication.processEvents()
    view = window.reader.view
    iface = QAccessible.queryAccessibleInterface(view)
    assert iface.role() == QAccessible.Role.EditableText, iface.role()
    assert iface.state().readOnly, "a reader cannot type into the book"
    assert iface.text(QAccessible.Text.Name) == "Book page"
    text = iface.textInterface()
    spoken = text.text(0, text.characterCount())
    assert "Rabbit" in spoken
    # the caret and a selection made with keys are the document's, as a screen reader sees them
    view.setFocus()
    for _ in range(5):
        qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    cursor = view.textCursor()
    assert cursor.hasSelection()
    assert text.selectionCount() == 1
    assert text.cursorPosition() == cursor.position()
    # links are still the browser's: the view is a QTextBrowser that opens nothing by itself
    assert not view.openLinks()
