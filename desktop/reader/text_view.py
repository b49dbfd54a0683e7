"""Reflowable books (EPUB, text, Markdown, HTML) shown one stored virtual page at a time, so
page 42 here is page 42 in search results and citations.

Nothing is ever fetched from the network and nothing runs: ``loadResource`` serves only
``book:`` images from inside the EPUB and returns nothing for any other URL; links open in the
system browser only when clicked, and only for http(s) and mailto.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFont,
    QImage,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QTextEdit, QWidget

from core.books.model import PageContent
from core.errors import MarginError
from desktop.theme import MARK_RGBA, THEMES, Theme, highlight_colour, page_css

log = logging.getLogger("margin.reader")


class TextView(QTextBrowser):
    linkOpened = Signal(str)
    blockedRequests = 0  # remote resources refused (tests read it)

    def __init__(self, book_file: Path | None, fmt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Book page")
        self.book_file = book_file
        self.format = fmt
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._link)
        self.theme: Theme = THEMES["light"]
        self.font_size = 13
        self.page: PageContent | None = None
        self._highlights: list[tuple[str, str]] = []
        self._mark = ""
        self.document().setDocumentMargin(28)

    def loadResource(self, kind: int, url: QUrl | str) -> object:
        url = QUrl(url) if isinstance(url, str) else url
        if url.scheme() == "book" and self.book_file is not None and self.format == "epub":
            from core.books.epub import read_resource

            try:
                data = read_resource(self.book_file, url.path())
            except MarginError as exc:
                log.info("image not shown: %s", exc.message)
                return QByteArray()
            image = QImage.fromData(data)
            return image if not image.isNull() else QByteArray()
        TextView.blockedRequests += 1
        return QByteArray()  # no network, no local files outside the book

    def _link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            self.linkOpened.emit(url.toString())
            QDesktopServices.openUrl(url)

    def set_theme(self, name: str) -> None:
        self.theme = THEMES.get(name, THEMES["light"])
        self.setStyleSheet(
            f"QTextBrowser {{ background: {self.theme.background}; color: {self.theme.text}; }}"
        )
        self._render()

    def set_font_size(self, size: int) -> None:
        self.font_size = max(8, min(size, 40))
        self._render()

    def show_page(
        self, page: PageContent, highlights: list[tuple[str, str]], mark: str = ""
    ) -> None:
        self.page = page
        self._highlights = highlights
        self._mark = mark
        self._render()

    def _render(self) -> None:
        if self.page is None:
            return
        doc = self.document()
        doc.setDefaultStyleSheet(page_css(self.theme, self.font_size))
        font = QFont(doc.defaultFont())
        font.setPointSize(self.font_size)
        doc.setDefaultFont(font)
        html = self.page.html
        if not html:
            import html as htmllib

            html = "".join(f"<p>{htmllib.escape(p)}</p>" for p in self.page.text.split("\n\n"))
        self.setHtml(f"<html><body>{html}</body></html>")
        self._decorate()
        self.verticalScrollBar().setValue(0)

    def _find(self, text: str) -> QTextCursor | None:
        words = " ".join(text.split())
        for candidate in (words, words[:120], " ".join(words.split()[:8])):
            if not candidate:
                continue
            cursor = self.document().find(candidate)
            if not cursor.isNull():
                return cursor
        return None

    def _decorate(self) -> None:
        extras: list[QTextEdit.ExtraSelection] = []
        for text, colour in self._highlights:
            cursor = self._find(text)
            if cursor is not None:
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                fmt = QTextCharFormat()
                fmt.setBackground(highlight_colour(colour))
                sel.format = fmt
                extras.append(sel)
        if self._mark:
            cursor = self._find(self._mark)
            if cursor is not None:
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                fmt = QTextCharFormat()
                fmt.setBackground(QColor(*MARK_RGBA))
                sel.format = fmt
                extras.append(sel)
                self.setTextCursor(QTextCursor(cursor.block()))
                self.ensureCursorVisible()
        self.setExtraSelections(extras)

    def marked(self) -> bool:
        return any(
            sel.format.background().color().alpha() == MARK_RGBA[3]
            for sel in self.extraSelections()
        )

    def selected_text(self) -> str:
        return self.textCursor().selectedText().replace("\u2029", "\n").strip()

    def find_text(self, text: str) -> bool:
        return self._find(text) is not None

    def document_text(self) -> str:
        return self.document().toPlainText()

    def select_text(self, text: str) -> bool:
        """Select ``text`` on the page (used by tests and keyboard users)."""
        cursor = self.document().find(text, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if cursor.isNull():
            return False
        self.setTextCursor(cursor)
        return True
