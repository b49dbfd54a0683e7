"""The conversation header: the book's conversations (choose, new, rename, delete, export)
and the cost meter under them. It shows and asks; the pane decides what happens."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.store.conversations import ConversationInfo
from desktop.chat import history
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from core.agent.service import AgentService

MIN_LIST_WIDTH = 150  # pixels: the conversations list never shrinks below a readable title


class ConversationHeader(QWidget):
    conversationChosen = Signal(object)  # int | None
    requestNew = Signal()
    requestRename = Signal()
    requestDelete = Signal()
    requestExportConversation = Signal()
    requestExportBook = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conversations = QComboBox()
        self.conversations.setAccessibleName("Conversations")
        # titles never widen the pane (a resize would lay the whole transcript out again)
        self.conversations.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.conversations.setMinimumContentsLength(10)
        self.conversations.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.conversations.currentIndexChanged.connect(self._chosen)
        self.new_button = tool_button("New")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.setToolTip("New conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.requestNew)
        self.rename_button = tool_button("Rename")
        self.rename_button.setAccessibleName("Rename conversation")
        self.rename_button.clicked.connect(self.requestRename)
        self.delete_button = tool_button("Delete")
        self.delete_button.setAccessibleName("Delete conversation")
        self.delete_button.clicked.connect(self.requestDelete)
        self.menu_button = tool_button("⋯")
        self.menu_button.setAccessibleName("More conversation actions")
        self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # Fusion draws a menu arrow over the "⋯" of so narrow a button: the dots say it
        self.menu_button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0; }")
        menu = QMenu(self.menu_button)
        menu.addAction("Export conversation as Markdown…", self.requestExportConversation.emit)
        menu.addAction("Export all conversations about this book…", self.requestExportBook.emit)
        self.menu_button.setMenu(menu)
        # a visible label: a screen reader names the box by it (labelled-by), not by its value
        self.conversations_label = QLabel("Chat:")
        self.conversations_label.setBuddy(self.conversations)
        self.row = QHBoxLayout()
        self.row.addWidget(self.conversations_label)
        self.row.addWidget(self.conversations, 1)
        # the buttons sit beside the list when the pane is wide enough, else on a row of
        # their own under it (never clipped: the "⋯" button stays whole at 1024 px)
        # (layouts only: the buttons keep their parent, so the Tab order does not change)
        self.buttons_row = QHBoxLayout()
        self.buttons_row.addStretch(1)
        self._buttons = (self.new_button, self.rename_button, self.delete_button, self.menu_button)
        self._beside = False
        self._place_buttons(beside=True)
        self.cost = QLabel("")
        # no fixed name: a screen reader reads what it says ("1,234 tokens · $0.01")
        self.cost.setAccessibleDescription("Tokens and cost")
        # never widens the pane (the transcript is never resized by it): it wraps instead
        self.cost.setWordWrap(True)
        self.cost.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.row)
        layout.setSpacing(2)  # an empty buttons row adds no gap to speak of
        layout.addLayout(self.buttons_row)
        layout.addWidget(self.cost)

    def _row_width(self) -> int:
        """The width one row needs: the label, a list wide enough to read, the buttons."""
        spacing = max(0, self.row.spacing()) * (len(self._buttons) + 1)
        return (
            self.conversations_label.sizeHint().width()
            + MIN_LIST_WIDTH
            + sum(b.sizeHint().width() for b in self._buttons)
            + spacing
        )

    def _place_buttons(self, beside: bool) -> None:
        if beside == self._beside:
            return
        self._beside = beside
        into = self.row if beside else self.buttons_row
        for b in self._buttons:
            self.row.removeWidget(b)
            self.buttons_row.removeWidget(b)
            into.addWidget(b)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._place_buttons(self.width() >= self._row_width())
        super().resizeEvent(event)

    def set_muted(self, colour: str) -> None:
        self.cost.setStyleSheet(f"color: {colour}; font-size: small;")

    def set_book_open(self, enabled: bool) -> None:
        for w in (
            self.conversations,
            self.new_button,
            self.rename_button,
            self.delete_button,
            self.menu_button,
        ):
            w.setEnabled(enabled)

    def fill(
        self, items: Iterable[ConversationInfo], running: Iterable[int], current: int | None
    ) -> None:
        """List ``items`` (a ● marks those answering), selecting ``current``; titles change
        in place when the list is the same, so the choice never flickers."""
        combo = self.conversations
        busy = set(running)
        combo.blockSignals(True)
        wanted = [(f"{c.title}{' ●' if c.id in busy else ''}", c.id) for c in items]
        have = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
        if [d for _, d in wanted] == [d for _, d in have]:
            for i, (title, _) in enumerate(wanted):
                if have[i][0] != title:
                    combo.setItemText(i, title)
        else:
            combo.clear()
            for title, conv_id in wanted:
                combo.addItem(title, conv_id)
        if current is not None:
            index = combo.findData(current)
            if index >= 0:
                combo.setCurrentIndex(index)
        combo.blockSignals(False)

    def select(self, conversation_id: int) -> None:
        self.conversations.blockSignals(True)
        self.conversations.setCurrentIndex(max(0, self.conversations.findData(conversation_id)))
        self.conversations.blockSignals(False)

    def _chosen(self, index: int) -> None:
        data = self.conversations.itemData(index)
        self.conversationChosen.emit(int(data) if data is not None else None)

    def rename(self, service: AgentService, conversation_id: int) -> bool:
        """Ask for a new title and give it to the conversation: whether it was renamed."""
        current = service.get_conversation(conversation_id).title
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:", text=current)
        if ok and title.strip():
            service.rename_conversation(conversation_id, title)
        return bool(ok and title.strip())

    def confirm_delete(self) -> bool:
        answer = QMessageBox.question(
            self, "Delete conversation", "Delete this conversation? This cannot be undone."
        )
        return answer == QMessageBox.StandardButton.Yes


class ModeBanner(QFrame):
    """Shown in passages mode: no model is connected, and a button to connect one."""

    requestSettings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        text = QLabel("No AI model is connected: answers are passages from the book.")
        text.setWordWrap(True)
        self.connect_button = QPushButton("Connect a model…")
        self.connect_button.setAccessibleName("Connect a model")
        self.connect_button.clicked.connect(self.requestSettings)
        layout = QHBoxLayout(self)
        layout.addWidget(text, 1)
        layout.addWidget(self.connect_button)


def export_dialog(parent: QWidget, what: str, default: str, export: Callable[[Path], Path]) -> str:
    """Ask where to save ``what`` and save it: the sentence to show ("" when cancelled)."""
    name, _ = QFileDialog.getSaveFileName(parent, f"Export {what}", default, "Markdown (*.md)")
    if not name:
        return ""
    try:
        return f"Saved {export(Path(name))}."
    except (MarginError, OSError) as exc:
        return f"The {what} could not be saved: {exc}"


def budget_allows(parent: QWidget, service: AgentService, book_id: int) -> str | None:
    """With a budget per book set, ask before a question may go past it: ``None`` to go on,
    or the sentence saying why the question was not asked."""
    question = history.over_budget(service, book_id)
    if question is None:
        return None
    answer = QMessageBox.question(parent, "Budget for this book", question)
    if answer == QMessageBox.StandardButton.Yes:
        return None
    return (
        f"Not asked: it would go past the budget of ${history.budget(service):.2f} for this "
        "book (change it in Settings)."
    )
