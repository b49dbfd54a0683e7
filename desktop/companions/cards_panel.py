"""The Cards tab: review the book's flashcards (highlights, notes, quiz questions) one at a
time — the question, then Show answer, then "Again" or "I knew it" — and export them all to
an Anki package."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QWidget

from core.companions import anki, cards
from core.errors import MarginError
from core.store.library import Library
from desktop.companions.panel import CompanionFeed, page_link, tab_layout
from desktop.tasks import in_background


class CardsPanel(QWidget):
    title = "Cards"

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.feed: CompanionFeed[tuple[list[cards.Card], int]] = CompanionFeed(
            self, self.title, self.load, self.show_result, self.clear
        )
        self.layout_ = tab_layout(self)
        self.queue: list[cards.Card] = []
        self.total = 0
        self.card = self.feed.browser("Flashcard")
        self.show_button = QPushButton("Show answer")
        self.show_button.clicked.connect(self.show_answer)
        self.again_button = QPushButton("Again")
        self.again_button.clicked.connect(lambda: self.answer(False))
        self.knew_button = QPushButton("I knew it")
        self.knew_button.clicked.connect(lambda: self.answer(True))
        self.export_button = QPushButton("Export to Anki…")
        self.export_button.clicked.connect(self.export)
        row = QHBoxLayout()
        for button in (self.show_button, self.again_button, self.knew_button):
            row.addWidget(button)
        self.layout_.addWidget(self.feed.status)
        self.layout_.addWidget(self.card, 1)
        self.layout_.addLayout(row)
        self.layout_.addWidget(self.export_button)
        self.feed.add_job(self.layout_, "Model quiz…", recap=False, notes=False, quiz=True)
        if self.feed.job is not None:  # a short label fits a narrow panel
            self.feed.job.setToolTip("Quiz questions on the chapters read, written by the model")
        self._buttons(answered=None)

    def load(self, book_id: int) -> tuple[list[cards.Card], int]:
        return cards.due(self.library, book_id), len(cards.cards(self.library, book_id))

    def show_result(self, result: tuple[list[cards.Card], int]) -> None:
        self.queue, self.total = list(result[0]), int(result[1])
        self._next()

    def clear(self) -> None:
        self.feed.status.setText("")
        self.queue = []
        self.card.clear()
        self.card.setAccessibleName("Flashcard")

    def _buttons(self, answered: bool | None) -> None:
        has = bool(self.queue)
        self.show_button.setVisible(has and answered is False)
        self.again_button.setVisible(has and bool(answered))
        self.knew_button.setVisible(has and bool(answered))
        self.export_button.setEnabled(self.total > 0)

    def _next(self) -> None:
        if not self.queue:
            self.feed.status.setText(
                f"No cards due ({self.total} in all)."
                if self.total
                else "No cards yet: highlight passages or write notes, and each becomes a card "
                "with its quote and page."
            )
            self.card.clear()
            self.card.setAccessibleName("Flashcard")
            self._buttons(None)
            return
        card = self.queue[0]
        self.feed.status.setText(f"{len(self.queue)} due of {self.total}.")
        self.card.setHtml(f"<p style='font-size:large'>{html.escape(card.front)}</p>")
        # named by its words: a screen reader says the whole card, not one wrapped line
        self.card.setAccessibleName(f"Flashcard: {card.front}")
        keys = self.focusWidget() in (self.again_button, self.knew_button)
        self._buttons(False)
        if keys:  # answered from the keyboard: the next card's Show answer takes the keys
            self.show_button.setFocus()

    def show_answer(self) -> None:
        if not self.queue:
            return
        card = self.queue[0]
        back = "<br>".join(html.escape(line) for line in card.back.split("\n"))
        link = f"<p>{page_link(card.page, card.quote[:80])}</p>" if card.page else ""
        self.card.setHtml(
            f"<p style='font-size:large'>{html.escape(card.front)}</p><hr><p>{back}</p>{link}"
        )
        self.card.setAccessibleName(
            f"Flashcard: {card.front} Answer: {' '.join(card.back.split())}"
        )
        keys = self.focusWidget() is self.show_button
        self._buttons(True)
        if keys:  # the button goes away: the card, now with its answer, takes the keys
            self.card.setFocus()

    def answer(self, knew: bool) -> None:
        if not self.queue or self.feed.book_id is None:
            return
        card = self.queue.pop(0)
        cards.review(self.library.db, self.feed.book_id, card.key, knew)
        if not knew:
            self.queue.append(card)  # again, at the end of this round
        self._next()

    def export(self) -> None:
        if self.feed.book_id is None:
            return
        book = self.library.get_book(self.feed.book_id)
        name, _ = QFileDialog.getSaveFileName(
            self, "Export cards to Anki", export_default(book.title), "Anki package (*.apkg)"
        )
        if name:
            self.export_to(Path(name))

    def export_to(self, path: Path) -> None:
        book_id = self.feed.book_id
        if book_id is None:
            return
        book = self.library.get_book(book_id)
        if path.suffix.lower() != ".apkg":
            path = path.with_name(path.name + ".apkg")

        def write() -> int:
            return anki.write_apkg(
                path, book.title, book.sha256, cards.cards(self.library, book_id)
            )

        def failed(exc: Exception) -> None:
            message = exc.message if isinstance(exc, MarginError) else str(exc)
            self.feed.status.setText(f"Not exported: {message}")

        in_background(
            write,
            then=lambda n: self.feed.status.setText(f"{n} cards exported to {path.name}."),
            failed=failed,
        )


def export_default(title: str) -> str:
    """Where the Anki export dialog starts: the home folder, as the other exports do, with a
    name made safe from the book's title (a "../" in a title never moves it elsewhere)."""
    from core.export.markdown import export_file_name

    return str(Path.home() / export_file_name(title, "cards", ".apkg"))
