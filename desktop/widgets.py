"""Small widget helpers shared by the window's parts."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton


def tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button
