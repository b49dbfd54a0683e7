"""The conversation view: one read-only ``QTextEdit`` document, each message a run of blocks.

Finished messages are inserted once and never touched again unless the reader changes them
(shows sources, reveals a hidden sentence); the live answer's blocks are the only thing a
streaming tick replaces, so a repaint costs the same at 0 or 60 earlier answers.

A message is found by a ``QTextCursor`` kept at its first position (the document moves it as
text is added or removed before it) and its place in ``_order``: it runs to the block
separator before the next message. No ``QTextFrame``: a frame puts U+FDD0 and U+FDD1 markers
into the text a screen reader is given (six after one answer).

A read-only ``QTextEdit``, not a ``QTextBrowser``: Qt gives a text browser the role of a
static label, which a screen reader reads as one long label; a read-only text is a document
it can move through. The browser's link handling is kept here: Tab and Shift+Tab go from
link to link (each announced as "Link: …"), Enter or a click opens one (``anchorClicked``).
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt, QUrl, Signal
from PySide6.QtGui import (
    QKeyEvent,
    QMouseEvent,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QTextEdit

from desktop.accessibility import announce

READABLE_WIDTH = 760  # pixels: about 90 characters, a comfortable line
GAP = 4  # pixels under each message (the first block of the next one has it above)


class Transcript(QTextEdit):
    """Never loads anything: no remote images from an answer's Markdown."""

    anchorClicked = Signal(QUrl)  # a link was opened (click, or Enter on a focused link)

    def __init__(self) -> None:
        super().__init__()
        self._starts: dict[str, QTextCursor] = {}
        self._order: list[str] = []
        self._pressed_on = ""  # the link a mouse press began on
        self.document().setDocumentMargin(10)
        self.setReadOnly(True)
        flags = Qt.TextInteractionFlag
        self.setTextInteractionFlags(
            flags.TextSelectableByMouse
            | flags.TextSelectableByKeyboard
            | flags.LinksAccessibleByMouse
            | flags.LinksAccessibleByKeyboard
        )
        self.viewport().setMouseTracking(True)
        self.setAccessibleDescription(
            "Questions and answers. Tab goes from link to link; Enter opens one."
        )

    def setOpenLinks(self, on: bool) -> None:
        """(As ``QTextBrowser``'s: links never open by themselves here; the pane opens them.)"""

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        return QByteArray()

    # links --------------------------------------------------------------------------------

    def links(self) -> list[tuple[int, int, str]]:
        """Every link in the document: (start, end, href), in order."""
        out: list[tuple[int, int, str]] = []
        block = self.document().begin()
        while block.isValid():
            for part in block:  # type: ignore[attr-defined]  # (PySide6 iterates a block)
                fragment = part.fragment()
                href = fragment.charFormat().anchorHref() if fragment.isValid() else ""
                if not href:
                    continue
                start, end = fragment.position(), fragment.position() + fragment.length()
                if out and out[-1][2] == href and out[-1][1] == start:
                    out[-1] = (out[-1][0], end, href)  # one link over several formats
                else:
                    out.append((start, end, href))
            block = block.next()
        return out

    def focused_link(self) -> str:
        cursor = self.textCursor()
        return cursor.charFormat().anchorHref() if cursor.hasSelection() else ""

    def focusNextPrevChild(self, forward: bool) -> bool:
        """Tab and Shift+Tab go to the next or previous link first, then leave the text."""
        if self.hasFocus():
            cursor = self.textCursor()
            if cursor.hasSelection() or self.focused_link():
                here = cursor.selectionEnd() if forward else cursor.selectionStart()
            else:  # from outside the links: the first (or the last)
                here = -1 if forward else self.document().characterCount()
            links = self.links()
            if forward:
                found = next(((a, b) for a, b, _ in links if a >= here), None)
            else:
                found = next(((a, b) for a, b, _ in reversed(links) if b <= here), None)
            if found is not None:
                link = QTextCursor(self.document())
                link.setPosition(found[0])
                link.setPosition(found[1], QTextCursor.MoveMode.KeepAnchor)
                self.setTextCursor(link)
                self.ensureCursorVisible()
                announce(self, f"Link: {link.selectedText().strip()}")
                return True
            cursor.clearSelection()
            self.setTextCursor(cursor)
        return super().focusNextPrevChild(forward)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        href = self.focused_link()
        if href and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.anchorClicked.emit(QUrl(href))
            return
        super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._pressed_on = self.anchorAt(event.position().toPoint())
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        over = bool(self.anchorAt(event.position().toPoint()))
        shape = Qt.CursorShape.PointingHandCursor if over else Qt.CursorShape.IBeamCursor
        self.viewport().setCursor(shape)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        href = self.anchorAt(event.position().toPoint())
        selected = self.textCursor().hasSelection() and not self.focused_link()
        if (
            event.button() == Qt.MouseButton.LeftButton
            and href
            and href == self._pressed_on
            and not selected
        ):
            self.anchorClicked.emit(QUrl(href))
        self._pressed_on = ""

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
        self._starts.clear()
        self._order.clear()
        if placeholder:
            QTextCursor(doc).insertHtml(placeholder)
            return
        # an empty first block of no height that no message owns: every message, the first
        # too, is then a block added after another one (a fresh format, nothing to clear)
        head = QTextBlockFormat()
        head.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
        QTextCursor(doc).setBlockFormat(head)

    def frame_keys(self) -> list[str]:
        """The messages' keys in document order."""
        return list(self._order)

    def has(self, key: str) -> bool:
        return key in self._starts

    def span(self, key: str) -> tuple[int, int]:
        """Where message ``key`` starts and ends (its end: before the next one's separator)."""
        start = self._starts[key].position()
        index = self._order.index(key)
        if index + 1 < len(self._order):
            return start, self._starts[self._order[index + 1]].position() - 1
        return start, self.document().characterCount() - 1

    def _new_block(self, position: int, key: str, html: str) -> None:
        """Message ``key`` in a new block after the block that ends at ``position``."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(position)
        cursor.beginEditBlock()  # one change for the layout, not two
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        start = cursor.position()
        cursor.insertHtml(html)
        cursor.endEditBlock()
        self._mark(key, start)

    def _mark(self, key: str, start: int) -> None:
        mark = self._starts.get(key) or QTextCursor(self.document())
        mark.setPosition(start)  # (a message replaced keeps its mark)
        self._starts[key] = mark

    def add(self, key: str, html: str) -> None:
        self._order.append(key)
        self._new_block(self.document().characterCount() - 1, key, html)

    def _insert_before(self, before: str, key: str, html: str) -> None:
        position = self._starts[before].position() - 1  # the end of the block before it
        self._order.insert(self._order.index(before), key)
        self._new_block(position, key, html)

    def prepend(self, key: str, html: str) -> None:
        """Insert a message before all the others (older history filled in later)."""
        if self._order:
            self._insert_before(self._order[0], key, html)
        else:
            self.add(key, html)

    def add_after(self, after: str, key: str, html: str) -> None:
        """Insert a message right after message ``after`` (the rest of a long answer)."""
        if after not in self._starts:
            self.add(key, html)
            return
        index = self._order.index(after)
        if index + 1 < len(self._order):
            self._insert_before(self._order[index + 1], key, html)
        else:
            self.add(key, html)

    def replace(self, key: str, html: str) -> None:
        if key not in self._starts:
            self.add(key, html)
            return
        start, end = self.span(key)
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.beginEditBlock()
        cursor.removeSelectedText()
        current = cursor.currentList()
        if current is not None:  # the emptied block would keep a list item's bullet
            current.remove(cursor.block())
        cursor.setBlockFormat(QTextBlockFormat())
        cursor.setCharFormat(QTextCharFormat())
        cursor.insertHtml(html)
        cursor.endEditBlock()
        self._mark(key, start)

    def remove(self, key: str) -> None:
        if key not in self._starts:
            return
        start, end = self.span(key)
        cursor = QTextCursor(self.document())
        cursor.setPosition(start - 1)  # with the separator before it (there always is one)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        del self._starts[key]
        self._order.remove(key)

    def rekey(self, old: str, new: str) -> None:
        mark = self._starts.pop(old, None)
        if mark is not None:
            self._starts[new] = mark
            self._order[self._order.index(old)] = new

    # scrolling ------------------------------------------------------------------------------

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 24

    def scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
