"""The line under the page: chapter, page, progress, time left — and, while the reader is
looking ahead past the assistant's bound, a note saying so first (the toolbar's "Read to
here" moves the bound on purpose).

One line of text whatever it says: the page above is never laid out again (and moved) when
the reader starts or stops looking ahead."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.reading import ReadingSession
from desktop.reader.pages import Chapters


class Footer(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        # no fixed name: a screen reader reads what it says (chapter, page, time left)
        self.setAccessibleDescription("Reading progress")
        self.setContentsMargins(8, 1, 8, 1)
        # a long line is cut at the window's edge, never widens the page column above
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._progress = ""
        self._note = ""

    def show_progress(
        self, session: ReadingSession, chapter: str, chapters: Chapters, printed: str = ""
    ) -> None:
        """Chapter, page (and the printed page of the paper book, from an EPUB's page-list or
        a PDF's labels), percent and the time left in the chapter at the reader's pace, and
        the looking-ahead note."""
        page, total = session.page, session.page_count
        where = f"p. {page} of {total}"
        if printed and printed != str(page):
            where += f" (p. {printed} in print)"
        parts = [chapter, where, f"{round(100 * page / total)}%"]
        left = chapters.left_from(page)
        self._note = session.bound_note()
        if left and not self._note:  # (looking ahead: the note takes the room)
            minutes = max(1, round(left * session.pace.seconds_per_page() / 60))
            parts.append(f"about {minutes} min left in chapter")
        self.set_progress("  ·  ".join(p for p in parts if p))

    def set_progress(self, text: str) -> None:
        """Chapter, page, percent and time left."""
        self._progress = text
        self._show()

    def set_looking_ahead(self, note: str) -> None:
        """``note`` ("Looking ahead — the assistant still stops at p. 30"), or "" when the
        reader is where reading stopped."""
        self._note = note
        self._show()

    def looking_ahead(self) -> bool:
        return bool(self._note)

    def clear(self) -> None:
        self._progress = self._note = ""
        self._show()

    def _show(self) -> None:
        if self._note:
            self.setText(f"<b>{self._note}</b>  ·  {self._progress}")
            self.setToolTip(
                "You jumped past where you have read: turning pages here does not move the "
                "assistant's limit. “Read to here” (Ctrl+Shift+R) moves it to this page."
            )
        else:
            self.setText(self._progress)
            self.setToolTip("")

    def plain_text(self) -> str:
        """What the footer says, without markup."""
        return f"{self._note}  ·  {self._progress}" if self._note else self._progress
