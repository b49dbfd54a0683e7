"""The line above a thread's messages: what passage it is about ("About p. 40: “…”"), a link
that turns the book to that passage and marks it. Hidden for free conversations."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.store.conversations import ConversationInfo
from desktop.requests import OpenPageRequest


class ThreadHeader(QLabel):
    requestOpenPage = Signal(object)  # OpenPageRequest: the passage, marked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("threadHeader")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setContentsMargins(4, 2, 4, 4)
        self.linkActivated.connect(self._open)
        self.request: OpenPageRequest | None = None
        self._shown: tuple[int | None, ConversationInfo | None] = (None, None)
        self.hide()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.request is not None:
            self.show_conversation(*self._shown)  # the link's colour for the new theme
        super().changeEvent(event)

    def show_conversation(self, book_id: int | None, conversation: ConversationInfo | None) -> None:
        """Show what ``conversation`` is about (hidden when it is not a thread)."""
        quote = getattr(conversation, "quote", None)
        if book_id is None or quote is None:
            self.request = None
            self.hide()
            return
        self._shown = (book_id, conversation)
        self.request = OpenPageRequest(book_id, quote.page, quote.exact, quote.start)
        words = quote.exact if len(quote.exact) <= 160 else quote.exact[:159] + "…"
        lost = (
            " <i>(its words were not found when the book was read again)</i>" if quote.lost else ""
        )
        window = self.palette().color(QPalette.ColorRole.Window)
        link = "#8ab4ff" if window.lightness() < 128 else "#1f5fc8"  # ≥ 4.5 : 1 either way
        self.setText(
            f'<a href="passage" style="color: {link}">About p. {quote.page}</a>: '
            f"“{html.escape(words)}”{lost}"
        )
        self.setAccessibleName(f"This thread is about page {quote.page}: {words}")
        self.setToolTip("Show this passage in the book")
        self.show()

    def _open(self, _link: str = "") -> None:
        if self.request is not None:
            self.requestOpenPage.emit(self.request)
