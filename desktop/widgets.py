"""Small widget helpers shared by the window's parts."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QToolButton


def tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


def history_button(view: Any, event: QMouseEvent) -> bool:
    """The mouse's back/forward buttons on a reading view: emit its ``requestBack`` or
    ``requestForward``. True when the press was one of them (the view then ignores it)."""
    if event.button() == Qt.MouseButton.BackButton:
        view.requestBack.emit()
        return True
    if event.button() == Qt.MouseButton.ForwardButton:
        view.requestForward.emit()
        return True
    return False
