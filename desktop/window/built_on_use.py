"""``BuiltOnUse``: a part of the main window's reading view, built after the first paint."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow


class BuiltOnUse[T]:
    """A part of the reading view (the reader, the chat pane, their splitter and buttons):
    built after the first paint (``finish_building``) or on first use (tests, ``--open``, a
    menu action before then). Building them took ~100 ms of every start."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, window: MainWindow | None, owner: type | None = None) -> T:
        if window is None:  # asked of the class: the parts belong to a window
            raise AttributeError(self.name)
        if not window._built:
            window.finish_building()
        return cast(T, window._parts[self.name])

    def __set__(self, window: MainWindow, value: T) -> None:
        window._parts[self.name] = value
