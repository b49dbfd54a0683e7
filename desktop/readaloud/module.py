"""Read aloud joined to the reader: where reading starts (the selection, the caret, or the
top of the screen), the spoken sentence marked on the page, the page turned by itself, and
pages listened to their end counted as read (``core.speech.listening``, the one call).

``ReaderSpeech`` is given the reader and its views (``mark_views.SpokenViews``); a far jump while listening (a
citation, the contents) goes on reading from the new place, and the reading session's rule
keeps such a page from raising ``read_to``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from core.speech import Utterance, plan_book
from core.speech.listening import page_listened
from desktop.events import PageShown
from desktop.readaloud.controller import ReadAloud

if TYPE_CHECKING:
    from desktop.highlights.mark_views import SpokenViews
    from desktop.reader.reader import Reader

log = logging.getLogger("margin.readaloud")


def stored_offset(stored: str, view_offset: int) -> int:
    """The offset in a page's stored text of ``view_offset`` in the page as the text view
    lays it out (the view has one break where the stored text has a blank line)."""
    extra = 0
    at = stored.find("\n\n")
    while at >= 0 and at - extra < view_offset:
        extra += 1
        at = stored.find("\n\n", at + 2)
    return min(len(stored), view_offset + extra)


class ReaderSpeech(QObject):
    """The reader's side of reading aloud."""

    announce = Signal(str)  # a short state for the status bar and screen readers

    def __init__(self, reader: Reader, views: SpokenViews, speech: ReadAloud | None = None) -> None:
        super().__init__(reader)
        self.reader = reader
        self.views = views  # the stored pages and the view the words are marked in
        self.speech = speech or ReadAloud(parent=self)
        self._turning = False  # the page moves because of us, not the reader
        self.marks: list[tuple[int, int, int]] = []  # (page, start, end) marked, latest last
        self.word = ""  # the word underlined last
        s = self.speech
        s.utteranceStarted.connect(self._show)
        s.wordStarted.connect(self._word)
        s.pageListened.connect(self._listened)
        s.stateChanged.connect(self._state)
        s.message.connect(self.announce)
        reader.events.subscribe(PageShown, lambda e: self._page_changed(e.book_id, e.page))

    # what to read -------------------------------------------------------------------------

    def _planner(self, page: int, offset: int) -> Iterator[Utterance]:
        book = self.reader.book
        library = self.reader.library
        assert book is not None  # the planner is given only while a book is open
        return plan_book(
            lambda n: library.page(book.id, n).text, book.page_count, page, book.format, offset
        )

    def book_opened(self) -> None:
        book = self.reader.book
        self.speech.set_source(
            self._planner if book is not None else None, book.language if book else ""
        )

    def start_place(self) -> tuple[int, int]:
        """Where Play reads from: the selection, the caret (caret browsing), else the first
        line on screen; offsets in the stored page text."""
        views = self.views
        text = views.text_view()
        if text is not None and text.flow.loaded:
            cursor = text.textCursor()
            if cursor.hasSelection() or self.reader.typography.caret_browsing:
                page, offset = text.flow.page_offset(cursor.selectionStart())
            else:
                page, offset = text.top_position()
            if page:
                stored = views.pages.stored_text(page) if views.pages is not None else ""
                return page, stored_offset(stored, offset)
        return self.reader.page, 0

    # controls ------------------------------------------------------------------------------

    def toggle(self) -> None:
        if self.reader.book is None and self.speech.state == "stopped":
            self.announce.emit("Open a book to read it aloud.")
            return
        if self.speech.state == "stopped":
            self.book_opened()
            self.speech.play(*self.start_place())
        else:
            self.speech.toggle()

    # the page ------------------------------------------------------------------------------

    def _show(self, u: Utterance) -> None:
        """Mark the sentence said, turning to its page when it is on another one."""
        if not u.page or self.reader.book is None:
            return
        stored = self.views.pages.stored_text(u.page) if self.views.pages else ""
        self.marks.append((u.page, u.start, u.end))
        del self.marks[:-50]
        pdf = self.views.pdf_view()
        if pdf is not None:
            pdf.word = None  # the last sentence's word
        if u.page == self.reader.page and self._mark_in_place(u, stored):
            return
        words = stored[u.start : u.end] or u.text
        self._turning = True
        try:
            self.reader.go_to_page(u.page, mark=words, near=max(1, u.start), remember=False)
        finally:
            self._turning = False

    def _mark_in_place(self, u: Utterance, stored: str) -> bool:
        """Mark a sentence of the page laid out now without laying it out again (about ten
        times quicker than a turn to the page); False when it is not on screen."""
        pdf = self.views.pdf_view()
        if pdf is not None:  # a PDF page's text layer: marked where it is, the view kept
            words = stored[u.start : u.end] or u.text
            return pdf.mark_text(u.page, words, near=u.start, stored=stored) and bool(
                pdf.mark_visible()
            )
        text = self.views.text_view()
        if text is None or u.page not in text.flow.loaded:
            return False
        start = u.start - stored[: u.start].count("\n\n")
        end = u.end - stored[: u.end].count("\n\n")
        text.marks.mark_span(text.flow.pos(u.page, start), text.flow.pos(u.page, end))
        return bool(text.mark_visible())

    def _word(self, page: int, start: int, end: int) -> None:
        """Underline the word said (engines that report words), over the sentence's mark."""
        from PySide6.QtGui import QTextCharFormat, QTextCursor
        from PySide6.QtWidgets import QTextEdit

        views = self.views
        if views.pages is None:
            return
        stored = views.pages.stored_text(page)
        pdf = views.pdf_view()
        if pdf is not None:  # a PDF with a text layer: the word underlined on its page
            if pdf.mark_word(page, stored[start:end], near=start, stored=stored):
                self.word = stored[start:end]
            return
        text = views.text_view()
        if text is None or page not in text.flow.loaded:
            return
        cursor = QTextCursor(text.document())
        cursor.setPosition(text.flow.pos(page, start - stored[:start].count("\n\n")))
        cursor.setPosition(
            text.flow.pos(page, end - stored[:end].count("\n\n")), QTextCursor.MoveMode.KeepAnchor
        )
        word = QTextEdit.ExtraSelection()
        word.cursor = cursor
        fmt = QTextCharFormat()
        fmt.setFontUnderline(True)
        fmt.setProperty(QTextCharFormat.Property.UserProperty, "spoken-word")
        word.format = fmt
        kept = [
            sel
            for sel in text.extraSelections()
            if sel.format.property(QTextCharFormat.Property.UserProperty) != "spoken-word"
        ]
        text.setExtraSelections([*kept, word])
        self.word = cursor.selectedText()

    def _listened(self, page: int) -> None:
        session = self.reader.session
        if session is not None:
            page_listened(session, page)  # the one place listening moves read_to

    def _page_changed(self, _book: int, page: int) -> None:
        """A jump by the reader while listening: read on from the new place."""
        current = self.speech.current
        if self._turning or self.speech.state != "playing" or current is None:
            return
        if abs(page - current.page) > 1:
            self.speech.play(*self.start_place())

    def _state(self, state: str) -> None:
        words = {
            "playing": "Reading aloud",
            "paused": "Reading aloud paused",
            "stopped": "Reading aloud stopped",
        }
        self.announce.emit(words[state])
