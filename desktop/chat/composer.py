"""Where the reader writes: the selected passage's card, the question box (Enter sends,
Shift+Enter a new line), the spoiler choice for the next question, Send and Stop."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.requests import AskRequest
from desktop.widgets import tool_button

SPOILERS_END = 10**9  # "to the end": past any book's last page (as the CLI's --spoilers-until end)


class QuestionBox(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    requestSend = Signal()
    requestStop = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection: AskRequest | None = None
        self.card = QFrame()
        self.card.setObjectName("card")
        self.card.setFrameShape(QFrame.Shape.StyledPanel)
        self.card_text = QLabel()
        self.card_text.setWordWrap(True)
        self.card_text.setAccessibleName("Selected passage")
        card_close = tool_button("✕")
        card_close.setAccessibleName("Remove the selected passage")
        card_close.clicked.connect(self.clear_selection)
        cl = QHBoxLayout(self.card)
        cl.addWidget(self.card_text, 1)
        cl.addWidget(card_close, 0, Qt.AlignmentFlag.AlignTop)
        self.card.hide()
        self.input = QuestionBox()
        self.input.setPlaceholderText(
            "Ask about this book… (Enter sends, Shift+Enter for a new line)"
        )
        self.input.setAccessibleName("Question")
        # a plain-text question needs no tab characters: Tab and Shift+Tab move on (no trap)
        self.input.setTabChangesFocus(True)
        self.input.setMaximumHeight(90)
        self.input.submitted.connect(self.requestSend)
        self.spoilers = QComboBox()
        self.spoilers.setAccessibleName("Spoilers for this question")
        self.spoilers.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        # short choices after the "Spoilers:" label: the row fits the narrowest chat pane
        self.spoilers.setMinimumContentsLength(11)
        self.spoilers.addItem("None", None)
        self.spoilers.addItem("Up to page…", "page")
        self.spoilers.addItem("To the end", "end")
        self.spoilers.setToolTip(
            "For the next question only: “I don't mind spoilers up to page …” or “to the "
            "end”. Otherwise answers never name anything past where you have read."
        )
        self.spoilers.currentIndexChanged.connect(self._spoilers_changed)
        self.spoiler_page = QSpinBox(minimum=1, maximum=100000)
        self.spoiler_page.setPrefix("p. ")
        self.spoiler_page.setAccessibleName("Spoilers allowed up to page")
        self.spoiler_page.hide()
        self.send_button = QPushButton("Send")
        self.send_button.setAccessibleName("Send question")
        self.send_button.clicked.connect(self.requestSend)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop the answer")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.clicked.connect(self.requestStop)
        self.stop_button.hide()
        width = max(self.stop_button.sizeHint().width(), self.send_button.sizeHint().width())
        self.stop_button.setFixedWidth(width)
        self.send_button.setFixedWidth(width)
        # a visible label: a screen reader names the box by it (labelled-by), not by its value
        self.spoilers_label = QLabel("Spoilers:")
        self.spoilers_label.setToolTip(self.spoilers.toolTip())
        self.spoilers_label.setBuddy(self.spoilers)
        # the spoiler choice and the buttons share a row; in a narrow chat pane they stack
        # (the choice above, the buttons under it on the right), so the row never holds the
        # pane wider than its other parts need (``minimumSizeHint``)
        self._choice = QHBoxLayout()
        self._choice.addWidget(self.spoilers_label)
        self._choice.addWidget(self.spoilers)
        self._choice.addWidget(self.spoiler_page)
        self._choice.addStretch(1)
        self._actions = QHBoxLayout()
        self._actions.addStretch(1)
        self._actions.addWidget(self.stop_button)
        self._actions.addWidget(self.send_button)
        self.row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.row.addLayout(self._choice, 1)
        self.row.addLayout(self._actions)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # the widget's minimum is ``minimumSizeHint`` (the stacked row's), not the layout's
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        layout.addWidget(self.card)
        layout.addWidget(self.input)
        layout.addLayout(self.row)

    # one row when it fits, stacked when the pane is narrower -------------------------------

    def _one_row_width(self) -> int:
        spacing = max(0, self.row.spacing())
        return self._choice.minimumSize().width() + spacing + self._actions.minimumSize().width()

    def stacked(self) -> bool:
        return self.row.direction() == QBoxLayout.Direction.TopToBottom

    def _fit_row(self) -> None:
        wanted = (
            QBoxLayout.Direction.TopToBottom
            if self.width() < self._one_row_width()
            else QBoxLayout.Direction.LeftToRight
        )
        if self.row.direction() != wanted:
            self.row.setDirection(wanted)
            self.updateGeometry()  # the stacked row is taller

    def minimumSizeHint(self) -> QSize:
        hint = self._layout.minimumSize()
        narrow = max(
            self._choice.minimumSize().width(),
            self._actions.minimumSize().width(),
            self.input.minimumSizeHint().width(),
            self.card.minimumSizeHint().width() if self.card.isVisible() else 0,
        )
        return QSize(narrow, hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_row()

    def set_book(self, enabled: bool, pages: int | None = None) -> None:
        self.clear_selection()
        self.input.setEnabled(enabled)
        self.send_button.setEnabled(enabled)
        if pages is not None:
            self.spoiler_page.setMaximum(max(1, pages))

    def show_selection(self, request: AskRequest) -> None:
        """A passage to ask about: shown on a card above the question until sent or removed."""
        self.selection = request
        short = request.text if len(request.text) < 400 else request.text[:397] + "…"
        self.card_text.setText(f"“{short}” — p. {request.page}")
        self.card.show()
        self.input.setFocus()

    def clear_selection(self) -> None:
        self.selection = None
        self.card.hide()

    def _spoilers_changed(self) -> None:
        self.spoiler_page.setVisible(self.spoilers.currentData() == "page")
        self._fit_row()  # the page box makes the choice wider

    def spoilers_until(self) -> int | None:
        """The reader's choice for the next question only."""
        choice = self.spoilers.currentData()
        if choice == "end":
            return SPOILERS_END
        if choice == "page":
            return int(self.spoiler_page.value())
        return None

    def question(self) -> str:
        return self.input.toPlainText().strip()

    def sent(self) -> None:
        """The question went: the box empties and the spoiler choice goes back to none."""
        self.input.clear()
        self.spoilers.setCurrentIndex(0)

    def set_running(self, running: bool, book_open: bool) -> None:
        # Stop takes Send's place: the row keeps its width, so the pane is never resized
        self.stop_button.setVisible(running)
        self.send_button.setVisible(not running)
        self.send_button.setEnabled(not running and book_open)
