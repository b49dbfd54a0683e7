"""The line under the page: chapter, page, progress, time left — and, while the reader is
looking ahead past the assistant's bound, a note saying so first (the toolbar's "Read to
here" moves the bound on purpose).

One line of text whatever it says: the page above is never laid out again (and moved) when
the reader starts or stops looking ahead. When the line is wider than the footer (a narrow
window, the side panel and the chat open, a long chapter title) it gives up its least useful
words first — the chapter title is shortened (the time left said in full, then as "16 min
left"), then dropped, then the percentage, the printed page and the time left, the page last —
and the tooltip and the accessible name keep all of it."""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.reading import ReadingSession
from desktop.accessibility import announce
from desktop.events import BookClosed, Events, PageShown, ReadToChanged
from desktop.reader.pages import Chapters, PageLabels

if TYPE_CHECKING:
    from PySide6.QtWidgets import QTreeWidgetItem

SEP = "  ·  "
LOOKING_AHEAD_TIP = (
    "You jumped past where you have read: turning pages here does not move the "
    "assistant's limit. “Read to here” (Ctrl+Shift+R) moves it to this page."
)
TITLE_CHARS = 16  # a chapter title is shortened to about this many characters, else dropped


@dataclass(frozen=True)
class Progress:
    """The footer's words, each part apart so that a narrow footer can drop some."""

    chapter: str = ""
    page: str = ""  # "p. 39 of 97"
    printed: str = ""  # " (p. 38 in print)"
    percent: str = ""
    minutes: int = 0  # time left in the chapter, 0 when unknown or looking ahead

    def parts(self, *, long_time: bool = True) -> list[str]:
        left = ""
        if self.minutes:
            left = (
                f"about {self.minutes} min left in chapter"
                if long_time
                else (f"{self.minutes} min left")
            )
        return [self.chapter, self.page + self.printed, self.percent, left]

    def text(self, *, long_time: bool = True) -> str:
        return SEP.join(p for p in self.parts(long_time=long_time) if p)

    def shorter(self) -> list[Progress]:
        """Ever shorter versions, least useful words first (the chapter title is handled
        apart: it is shortened before it goes)."""
        no_title = replace(self, chapter="")
        no_percent = replace(no_title, percent="")
        no_printed = replace(no_percent, printed="")
        return [no_title, no_percent, no_printed, replace(no_printed, minutes=0)]


class ReadingProgress(Protocol):
    """What the footer reads of the reader: the session, the chapters and printed pages."""

    session: ReadingSession | None
    chapters: Chapters
    labels: PageLabels

    def current_chapter(self) -> QTreeWidgetItem | None: ...


class Footer(QLabel):
    def __init__(
        self,
        events: Events | None = None,
        reading: ReadingProgress | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("", parent)
        if events is not None and reading is not None:  # (alone in a test: shown by hand)
            follow = lambda _e: self.follow(reading)  # noqa: E731
            events.subscribe(PageShown, follow)
            events.subscribe(ReadToChanged, follow)
            events.subscribe(BookClosed, lambda _e: self.clear())
        self.setAccessibleDescription("Reading progress")
        self.setContentsMargins(8, 1, 8, 1)
        # a long line is fitted to the footer, never widens the page column above
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._progress = Progress()
        self._note = ""

    def show_progress(
        self, session: ReadingSession, chapter: str, chapters: Chapters, printed: str = ""
    ) -> None:
        """Chapter, page (and the printed page of the paper book, from an EPUB's page-list or
        a PDF's labels), percent and the time left in the chapter at the reader's pace, and
        the looking-ahead note."""
        page, total = session.page, session.page_count
        left = chapters.left_from(page)
        self._set_note(session.bound_note())
        minutes = 0
        if left and not self._note:  # (looking ahead: the note takes the room)
            minutes = max(1, round(left * session.pace.seconds_per_page() / 60))
        self._progress = Progress(
            chapter=chapter,
            page=f"p. {page} of {total}",
            printed=f" (p. {printed} in print)" if printed and printed != str(page) else "",
            percent=f"{round(100 * page / total)}%",
            minutes=minutes,
        )
        self._show()

    def follow(self, reading: ReadingProgress) -> None:
        """Show where the reader is now (a page shown, the bound moved)."""
        chapter = reading.current_chapter()
        title = chapter.text(0) if chapter is not None else ""
        if reading.session is not None:
            printed = reading.labels.printed(reading.session.page)
            self.show_progress(reading.session, title, reading.chapters, printed)

    def set_looking_ahead(self, note: str) -> None:
        """``note`` ("Looking ahead — the assistant still stops at p. 30"), or "" when the
        reader is where reading stopped."""
        self._set_note(note)
        self._show()

    def _set_note(self, note: str) -> None:
        # said as looking ahead starts and ends, not as a book opens
        if bool(note) != bool(self._note) and self._progress != Progress():
            announce(self, note or "Back where reading stopped.")
        self._note = note

    def looking_ahead(self) -> bool:
        return bool(self._note)

    def clear(self) -> None:
        self._progress = Progress()
        self._note = ""
        self._show()

    def plain_text(self) -> str:
        """All the footer says (what it shows may be shorter), without markup."""
        return SEP.join(p for p in (self._note, self._progress.text()) if p)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._show()

    def _fit(self, room: int) -> str:
        """The longest version of the progress that fits in ``room`` pixels."""
        metrics = self.fontMetrics()
        width = metrics.horizontalAdvance
        full = self._progress
        if width(full.text()) <= room:
            return full.text()
        title = full.chapter
        for long_time in (True, False):
            rest = replace(full, chapter="").text(long_time=long_time)
            title_room = room - width(rest) - (width(SEP) if rest else 0)
            if title and title_room >= TITLE_CHARS * metrics.averageCharWidth():
                short = metrics.elidedText(title, Qt.TextElideMode.ElideRight, title_room)
                return replace(full, chapter=short).text(long_time=long_time)
        for version in full.shorter():
            for long_time in (True, False):
                if width(version.text(long_time=long_time)) <= room:
                    return version.text(long_time=long_time)
        return metrics.elidedText(full.shorter()[-1].text(), Qt.TextElideMode.ElideRight, room)

    def _show(self) -> None:
        room = max(0, self.contentsRect().width() - 2)
        note = self._note
        if note:
            bold = QFont(self.font())
            bold.setBold(True)
            strong = QFontMetrics(bold)
            note = strong.elidedText(note, Qt.TextElideMode.ElideRight, room)
            room -= strong.horizontalAdvance(note) + self.fontMetrics().horizontalAdvance(SEP)
        progress = self._fit(room) if room > 0 or not note else ""
        if note:
            self.setTextFormat(Qt.TextFormat.RichText)
            tail = f"{SEP}{html.escape(progress)}" if progress else ""
            self.setText(f"<b>{html.escape(note)}</b>{tail}".replace("  ", "&nbsp; "))
        else:
            self.setTextFormat(Qt.TextFormat.PlainText)
            self.setText(progress)
        full = self.plain_text()
        shortened = SEP.join(p for p in (note, progress) if p) != full
        tips = [full if shortened else "", LOOKING_AHEAD_TIP if self._note else ""]
        self.setToolTip("\n\n".join(t for t in tips if t))
        # a screen reader reads all of it, whatever the width
        self.setAccessibleName(full)
