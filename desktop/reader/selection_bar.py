"""The small bar that appears next to a selection: Ask…, Explain, Define, Summarize,
Translate, Highlight. The same actions are in the context menu."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QToolButton, QWidget

from desktop.widgets import tool_button

ACTIONS = (
    ("ask", "Ask…"),
    ("explain", "Explain"),
    ("define", "Define"),
    ("summarize", "Summarize"),
    ("translate", "Translate"),
)


class SelectionBar(QFrame):
    actionChosen = Signal(str)  # an action name, or "highlight"

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("selectionBar")
        self.setAccessibleName("Selection actions")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        self.buttons: dict[str, QToolButton] = {}
        for key, label in (*ACTIONS, ("highlight", "Highlight")):
            button = tool_button(label)
            button.setAccessibleName(label.rstrip("…"))
            button.setToolTip(f"{label.rstrip('…')} the selected text")
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, k=key: self.actionChosen.emit(k))
            layout.addWidget(button)
            self.buttons[key] = button
        self.hide()

    def show_at(self, point: QPoint) -> None:
        self.adjustSize()
        parent = self.parentWidget()
        x = point.x() - self.width() // 2
        y = point.y() + 8
        if parent is not None:
            x = max(4, min(x, parent.width() - self.width() - 4))
            if y + self.height() > parent.height() - 4:
                y = max(4, point.y() - self.height() - 28)
        self.move(x, y)
        self.show()
        self.raise_()
