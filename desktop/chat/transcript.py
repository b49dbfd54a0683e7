"""The conversation view: one ``QTextBrowser`` document with one frame per message.

Finished messages are inserted once and never touched again unless the reader changes them
(shows sources, reveals a hidden sentence); the live answer's frame is the only thing a
streaming tick replaces, so a repaint costs the same at 0 or 60 earlier answers.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QUrl
from PySide6.QtGui import (
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QTextBrowser, QTextEdit

READABLE_WIDTH = 760  # pixels: about 90 characters, a comfortable line


class Transcript(QTextBrowser):
    """Never loads anything: no remote images from an answer's Markdown."""

    def __init__(self) -> None:
        super().__init__()
        self._frames: dict[str, QTextFrame] = {}
        self._format = QTextFrameFormat()
        self._format.setMargin(0)
        self._format.setBottomMargin(4)
        self._format.setBorder(0)
        self._format.setPadding(0)
        self.document().setDocumentMargin(10)

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        return QByteArray()

    def resizeEvent(self, event: QResizeEvent) -> None:
        width = self.viewport().width()
        if width > READABLE_WIDTH + 40:
            self.setLineWrapMode(QTextEdit.LineWrapMode.FixedPixelWidth)
            self.setLineWrapColumnOrWidth(READABLE_WIDTH)
        else:
            self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        super().resizeEvent(event)

    # the document -------------------------------------------------------------------------

    def reset(self, css: str, placeholder: str = "") -> None:
        doc = self.document()
        doc.clear()
        doc.setDefaultStyleSheet(css)
        self._frames.clear()
        if placeholder:
            QTextCursor(doc).insertHtml(placeholder)

    def frame_keys(self) -> list[str]:
        """The messages' keys in document order."""
        return sorted(self._frames, key=lambda k: self._frames[k].firstPosition())

    def has(self, key: str) -> bool:
        return key in self._frames

    def add(self, key: str, html: str) -> None:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        frame = cursor.insertFrame(self._format)
        cursor.insertHtml(html)
        self._frames[key] = frame

    def prepend(self, key: str, html: str) -> None:
        """Insert a message before all the others (older history filled in later)."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(0)
        frame = cursor.insertFrame(self._format)
        cursor.insertHtml(html)
        self._frames[key] = frame

    def add_after(self, after: str, key: str, html: str) -> None:
        """Insert a frame right after message ``after`` (the rest of a long answer)."""
        frame = self._frames.get(after)
        if frame is None:
            self.add(key, html)
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(frame.lastPosition() + 1)
        new = cursor.insertFrame(self._format)
        cursor.insertHtml(html)
        self._frames[key] = new

    def replace(self, key: str, html: str) -> None:
        frame = self._frames.get(key)
        if frame is None:
            self.add(key, html)
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(frame.firstPosition())
        cursor.setPosition(frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        # the emptied block would keep the last block's format (a list item's bullet)
        current = cursor.currentList()
        if current is not None:
            current.remove(cursor.block())
        cursor.setBlockFormat(QTextBlockFormat())
        cursor.setCharFormat(QTextCharFormat())
        cursor.insertHtml(html)

    def remove(self, key: str) -> None:
        frame = self._frames.pop(key, None)
        if frame is None:
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(frame.firstPosition() - 1)
        cursor.setPosition(frame.lastPosition() + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def rekey(self, old: str, new: str) -> None:
        frame = self._frames.pop(old, None)
        if frame is not None:
            self._frames[new] = frame

    # scrolling ------------------------------------------------------------------------------

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 24

    def scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
