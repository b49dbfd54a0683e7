"""One-click starters under an empty conversation: "Who's who so far", "Recap chapters 1–N"
and "Quiz me". With a model they ask the chat (the prompts are in ``prompts/
companion_starter_*.md``, bounded like any question); without one they open the X-Ray, the
story so far and the flashcards, which need no model."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QLabel, QLayout, QPushButton, QSizePolicy, QWidget

from core.prompts import load_prompt
from desktop.tasks import in_background

if TYPE_CHECKING:
    from core.app import Margin

log = logging.getLogger(__name__)
WHOS_WHO, RECAP, QUIZ = "Who's who so far", "Recap", "Quiz me"
PANELS = {WHOS_WHO: "X-Ray", RECAP: "Story so far", QUIZ: "Cards"}


class Starters(QWidget):
    requestAsk = Signal(str, str)  # the question as shown, the prompt sent
    requestPanel = Signal(str)  # a companion tab to show (no model)

    def __init__(self, app: Margin, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.app = app
        self.setAccessibleName("Starters")
        self.chapters = 0  # chapters finished: "Recap chapters 1–N"
        self.book_id: int | None = None
        self.wanted = False  # an empty conversation of an open book is shown
        self.label = QLabel("Start with:")
        self.buttons: dict[str, QPushButton] = {}
        # never wider than the chat is: the buttons stack when the pane is narrow
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.addWidget(self.label)
        for name in (WHOS_WHO, RECAP, QUIZ):
            button = QPushButton(name)
            button.clicked.connect(lambda _=False, n=name: self.choose(n))
            self.box.addWidget(button)
            self.buttons[name] = button
        self.box.addStretch(1)
        self.hide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """In a row when it fits (without "Start with:" if need be), else one under another."""
        spacing = max(0, self.box.spacing())
        buttons = sum(b.sizeHint().width() + spacing for b in self.buttons.values())
        label = self.label.sizeHint().width() + spacing
        across = buttons <= self.width()
        self.label.setVisible(not across or buttons + label <= self.width())
        direction = QBoxLayout.Direction.LeftToRight if across else QBoxLayout.Direction.TopToBottom
        if self.box.direction() != direction:
            self.box.setDirection(direction)
            self.updateGeometry()

    def update_for(self, book_id: int | None, empty: bool) -> None:
        """Shown under an empty conversation of an open book, hidden otherwise."""
        self.book_id = book_id
        self.wanted = book_id is not None and empty
        if book_id is None or not self.wanted:
            self.hide()
            return
        in_background(
            self._chapters_read,
            book_id,
            then=lambda n: self._show(book_id, n),
            failed=self._failed,
        )

    def _failed(self, exc: Exception) -> None:
        # the book was removed meanwhile, or the library closed: no starters, no dialog
        log.info("starters not shown: %s", exc)

    def _chapters_read(self, book_id: int) -> int:
        from core.companions import recap
        from core.companions.xray import bound_of

        db = self.app.library.db
        bound = bound_of(db, book_id)
        return sum(1 for c in recap.chapters(db, book_id) if c.last <= bound)

    def _show(self, book_id: int, chapters: int) -> None:
        if not shiboken6.isValid(self) or book_id != self.book_id or not self.wanted:
            return  # the pane was closed, or another book or conversation is shown
        self.chapters = chapters
        recap_label = f"Recap chapters 1–{chapters}" if chapters > 1 else "Recap what I've read"
        self.buttons[RECAP].setText(recap_label)
        self._fit()
        offline = self.app.mode() == "passages"
        for name, button in self.buttons.items():
            button.setToolTip(
                f"Open the {PANELS[name]} tab (made from the book, no model needed)"
                if offline
                else f"Ask: {button.text()}"
            )
        self.show()

    def choose(self, name: str) -> None:
        if self.app.mode() == "passages":
            self.requestPanel.emit(PANELS[name])
            return
        if name == WHOS_WHO:
            self.requestAsk.emit(f"{WHOS_WHO}?", load_prompt("companion_starter_whos_who"))
        elif name == RECAP:
            last = str(max(1, self.chapters))
            self.requestAsk.emit(
                self.buttons[RECAP].text(),
                load_prompt("companion_starter_recap", first="1", last=last),
            )
        else:
            self.requestAsk.emit(QUIZ, load_prompt("companion_starter_quiz"))
        self.wanted = False
        self.hide()
