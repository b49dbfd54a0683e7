"""How the window is laid out: the library or the reading view, the side panel and the chat
beside the book (their visibility and widths), full screen and focus mode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMainWindow, QSplitter, QStackedWidget, QToolButton, QWidget

if TYPE_CHECKING:
    from PySide6.QtGui import QAction

    from desktop.library_panel import LibraryPanel
    from desktop.reader.reader import Reader

CHAT_SHARE = 0.3  # of the window's width, within the bounds below, when the chat first shows
CHAT_MIN, CHAT_MAX = 280, 440


def default_chat_width(window_width: int) -> int:
    return max(CHAT_MIN, min(CHAT_MAX, round(window_width * CHAT_SHARE)))


if TYPE_CHECKING:  # the type checker sees the window these methods belong to
    _Base = QMainWindow
else:
    _Base = object


class WindowLayout(_Base):
    """Part of ``MainWindow`` (which builds the widgets named below)."""

    reader: Reader
    chat: Any
    splitter: QSplitter
    views: QStackedWidget
    library_view: QWidget
    library_panel: LibraryPanel
    side_button: QToolButton
    chat_button: QToolButton
    action_leave_focus: QAction
    _focus_mode: bool
    _before_focus: dict[str, bool]
    _chat_width: int
    _sized = False

    if TYPE_CHECKING:

        def reading_view_built(self) -> bool: ...

    def library_shown(self) -> bool:
        return self.views.currentWidget() is self.library_view

    def show_library(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.views.setCurrentWidget(self.library_view)
        self.library_panel.setFocus()

    def show_reader(self) -> None:
        self.views.setCurrentWidget(self.splitter)
        if self.reader.view is not None:
            self.reader.view.setFocus()

    def toggle_library(self) -> None:
        """Ctrl+B: the library, or back to the book."""
        if self.library_shown() and self.reader.book is not None:
            self.show_reader()
        else:
            self.show_library()

    def _side_wanted(self) -> bool:
        return self._before_focus.get("side", self.side_button.isChecked())

    def _chat_wanted(self) -> bool:
        return self._before_focus.get("chat", self.chat_button.isChecked())

    def set_side_visible(self, visible: bool) -> None:
        self.reader.side.setVisible(visible)
        self.side_button.blockSignals(True)
        self.side_button.setChecked(visible)
        self.side_button.blockSignals(False)

    def toggle_side(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(not self.reader.side.isVisibleTo(self.reader))

    def chat_visible(self) -> bool:
        return self.chat.isVisibleTo(self.splitter) and self.splitter.sizes()[1] > 0

    def set_chat_visible(self, visible: bool) -> None:
        sizes = self.splitter.sizes()
        if not visible and sizes[1] > 0:
            self._chat_width = sizes[1]
        self.chat.setVisible(visible)
        if visible and self.splitter.sizes()[1] == 0:
            total = sum(self.splitter.sizes()) or self.width()
            width = self._chat_width or default_chat_width(total)
            self.splitter.setSizes([max(200, total - width), width])
        self.chat_button.blockSignals(True)
        self.chat_button.setChecked(visible)
        self.chat_button.blockSignals(False)

    def toggle_chat(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_chat_visible(not self.chat_visible())

    def find_in_book(self) -> None:
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(True)
        self.reader.focus_find()

    def set_full_screen(self, on: bool) -> None:
        if on and not self.isFullScreen():
            self._was_maximized = self.isMaximized()
            self.showFullScreen()
        elif not on and self.isFullScreen():
            if getattr(self, "_was_maximized", False):
                self.showMaximized()
            else:
                self.showNormal()

    def toggle_full_screen(self) -> None:
        self.set_full_screen(not self.isFullScreen())

    def focus_mode(self) -> bool:
        return self._focus_mode

    def set_focus_mode(self, on: bool) -> None:
        """Nothing but the page: no menus, toolbar, side panel, footer, chat or status bar."""
        if on == self._focus_mode:
            return
        if on:
            self.show_reader()
            self._before_focus = {
                "side": self.side_button.isChecked(),
                "chat": self.chat_button.isChecked(),
            }
            for w in (self.menuBar(), self.statusBar(), self.reader.toolbar, self.reader.footer):
                w.hide()
            self.reader.side.hide()
            self.chat.hide()
        else:
            before, self._before_focus = self._before_focus, {}
            for w in (self.menuBar(), self.statusBar(), self.reader.toolbar, self.reader.footer):
                w.show()
            self.set_side_visible(before.get("side", False))
            self.set_chat_visible(before.get("chat", True))
        self._focus_mode = on
        self.action_leave_focus.setEnabled(on)
        if self.reader.view is not None:
            self.reader.view.setFocus()

    def toggle_focus_mode(self) -> None:
        self.set_focus_mode(not self._focus_mode)

    def focus_chat(self) -> None:
        """Ctrl+L: the chat's input, showing the chat first when it is hidden."""
        if self._focus_mode:
            self.set_focus_mode(False)
        self.show_reader()
        if not self.chat_visible():
            self.set_chat_visible(True)
        if hasattr(self.chat, "focus_input"):
            self.chat.focus_input()

    def _view_changed(self, _index: int) -> None:
        if self._sized or not self.reading_view_built():
            return
        if self.views.currentWidget() is not self.splitter:
            return
        # the first time the reading view shows (and nothing was restored): the chat's
        # default width follows the window's width
        self._sized = True
        self.splitter.setGeometry(self.views.contentsRect())  # hidden pages keep old sizes
        total = sum(self.splitter.sizes())
        self._chat_width = default_chat_width(self.width())
        if self.chat.isVisibleTo(self.splitter):
            self.splitter.setSizes([total - self._chat_width, self._chat_width])
