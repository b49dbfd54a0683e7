"""Links in a QTextBrowser as a reader meets them: where each is, and a real click on one."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest


def links(view: Any) -> list[tuple[str, int]]:
    """(href, position) of every link in a browser's document, in document order."""
    found: list[tuple[str, int]] = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            href = fragment.charFormat().anchorHref()
            if href:
                found.append((href, fragment.position() + 1))
            it += 1
        block = block.next()
    return found


def click_at(view: Any, position: int) -> None:
    """A mouse click on the character at ``position`` of a browser's document (scrolled into
    view first)."""
    cursor = QTextCursor(view.document())
    cursor.setPosition(position)
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    rect = view.cursorRect(cursor)
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.x() + 2, rect.center().y())
    )
