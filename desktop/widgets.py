"""Small widget helpers shared by the window's parts."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QToolButton


def tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


class HistoryView(Protocol):
    """A reading view with Back and Forward requests (the mouse's side buttons)."""

    @property
    def requestBack(self) -> SignalInstance: ...

    @property
    def requestForward(self) -> SignalInstance: ...


def history_button(view: HistoryView, event: QMouseEvent) -> bool:
    """The mouse's back/forward buttons on a reading view: emit its ``requestBack`` or
    ``requestForward``. True when the press was one of them (the view then ignores it)."""
    if event.button() == Qt.MouseButton.BackButton:
        view.requestBack.emit()
        return True
    if event.button() == Qt.MouseButton.ForwardButton:
        view.requestForward.emit()
        return True
    return False
