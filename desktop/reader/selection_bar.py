"""The small bar that appears next to a selection: Ask…, Explain, Define, Summarize,
Translate, a highlight in one of four colours, or an underline or a line through. The same actions are in the context menu;
each has a shortcut (shown in its tooltip)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QToolButton, QWidget

from desktop.theme import highlight_colour
from desktop.widgets import tool_button

ACTIONS = (
    ("ask", "Ask…"),
    ("explain", "Explain"),
    ("define", "Define"),
    ("summarize", "Summarize"),
    ("translate", "Translate"),
)
SHORTCUTS = {
    "ask": "Ctrl+Return",
    "explain": "Ctrl+E",
    "define": "Ctrl+Shift+D",
    "summarize": "Ctrl+Shift+S",
    "translate": "Ctrl+Shift+T",
    "highlight": "Ctrl+H",
}
BAR_COLOURS = ("yellow", "green", "blue", "pink")  # Ctrl+1..Ctrl+4


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
            button.setToolTip(f"{label.rstrip('…')} the selected text ({SHORTCUTS[key]})")
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, k=key: self.actionChosen.emit(k))
            layout.addWidget(button)
            self.buttons[key] = button
        for i, colour in enumerate(BAR_COLOURS, start=1):
            button = QToolButton()
            swatch = QPixmap(14, 14)
            tone = highlight_colour(colour)
            swatch.fill(QColor(tone.red(), tone.green(), tone.blue()))
            button.setIcon(QIcon(swatch))
            button.setAccessibleName(f"Highlight {colour}")
            button.setToolTip(f"Highlight in {colour} (Ctrl+{i})")
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(
                lambda _=False, c=colour: self.actionChosen.emit(f"highlight:{c}")
            )
            layout.addWidget(button)
            self.buttons[f"highlight:{colour}"] = button
        for style, letter, name in (
            ("underline", "U", "Underline"),
            ("strike", "S", "Strike through"),
        ):
            button = tool_button(letter)
            font = button.font()
            font.setUnderline(style == "underline")
            font.setStrikeOut(style == "strike")
            button.setFont(font)
            button.setAccessibleName(name)
            button.setToolTip(f"{name} the selected text (a highlight drawn as a line)")
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(
                lambda _=False, st=style: self.actionChosen.emit(f"highlight:yellow:{st}")
            )
            layout.addWidget(button)
            self.buttons[style] = button
        self.hide()

    def add_button(self, key: str, button: QToolButton, *, before: str) -> None:
        """Another action on the bar (a companion's), placed before the button ``before``."""
        layout = self.layout()
        assert isinstance(layout, QHBoxLayout)
        layout.insertWidget(layout.indexOf(self.buttons[before]), button)
        self.buttons[key] = button

    def show_at(self, point: QPoint) -> None:
        self.adjustSize()
        parent = self.parentWidget()
        x = point.x() - self.width() // 2
        y = point.y() + 8
        if parent is not None:
            x = max(4, min(x, parent.width() - self.width() - 4))
            if y + self.height() > parent.height() - 4:
                y = point.y() - self.height() - 28
            y = max(4, min(y, parent.height() - self.height() - 4))
        self.move(x, y)
        self.show()
        self.raise_()
