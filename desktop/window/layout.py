"""How the window is laid out: the library or the reading view, the side panel and the chat
beside the book (their visibility and widths), full screen and focus mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow

CHAT_SHARE = 0.3  # of the window's width, within the bounds below, when the chat first shows
CHAT_MIN, CHAT_MAX = 280, 440


def default_chat_width(window_width: int) -> int:
    return max(CHAT_MIN, min(CHAT_MAX, round(window_width * CHAT_SHARE)))


class WindowLayout:
    """What the window shows and how: the library or the reading view, the side panel and the
    chat beside the book, full screen and focus mode. The window owns one (``window.panes``)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.focus_on = False  # focus mode: nothing but the page
        self._before_focus: dict[str, bool] = {}  # what focus mode hid, to show it again
        self.chat_width = default_chat_width(window.width())
        self.sized = False  # the reading view has had its first real size
        self._was_maximized = False

    def library_shown(self) -> bool:
        return self.window.views.currentWidget() is self.window.library_view

    def show_library(self) -> None:
        if self.focus_on:
            self.set_focus_mode(False)
        self.window.views.setCurrentWidget(self.window.library_view)
        self.window.library_panel.setFocus()

    def show_reader(self) -> None:
        self.window.views.setCurrentWidget(self.window.splitter)
        if self.window.reader.view is not None:
            self.window.reader.view.setFocus()

    def toggle_library(self) -> None:
        """Ctrl+B: the library, or back to the book."""
        if self.library_shown() and self.window.reader.book is not None:
            self.show_reader()
        else:
            self.show_library()

    def side_wanted(self) -> bool:
        return self._before_focus.get("side", self.window.side_button.isChecked())

    def chat_wanted(self) -> bool:
        return self._before_focus.get("chat", self.window.chat_button.isChecked())

    def set_side_visible(self, visible: bool) -> None:
        self.window.reader.side.setVisible(visible)
        self.window.side_button.blockSignals(True)
        self.window.side_button.setChecked(visible)
        self.window.side_button.blockSignals(False)

    def toggle_side(self) -> None:
        if self.focus_on:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(not self.window.reader.side.isVisibleTo(self.window.reader))

    def chat_visible(self) -> bool:
        return (
            self.window.chat.isVisibleTo(self.window.splitter)
            and self.window.splitter.sizes()[1] > 0
        )

    def set_chat_visible(self, visible: bool) -> None:
        sizes = self.window.splitter.sizes()
        if not visible and sizes[1] > 0:
            self.chat_width = sizes[1]
        self.window.chat.setVisible(visible)
        if visible and self.window.splitter.sizes()[1] == 0:
            total = sum(self.window.splitter.sizes()) or self.window.width()
            width = self.chat_width or default_chat_width(total)
            self.window.splitter.setSizes([max(200, total - width), width])
        self.window.chat_button.blockSignals(True)
        self.window.chat_button.setChecked(visible)
        self.window.chat_button.blockSignals(False)

    def toggle_chat(self) -> None:
        if self.focus_on:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_chat_visible(not self.chat_visible())

    def find_in_book(self) -> None:
        if self.focus_on:
            self.set_focus_mode(False)
        self.show_reader()
        self.set_side_visible(True)
        self.window.reader.focus_find()

    def set_full_screen(self, on: bool) -> None:
        if on and not self.window.isFullScreen():
            self._was_maximized = self.window.isMaximized()
            self.window.showFullScreen()
        elif not on and self.window.isFullScreen():
            if self._was_maximized:
                self.window.showMaximized()
            else:
                self.window.showNormal()

    def toggle_full_screen(self) -> None:
        self.set_full_screen(not self.window.isFullScreen())

    def focus_mode(self) -> bool:
        return self.focus_on

    def set_focus_mode(self, on: bool) -> None:
        """Nothing but the page: no menus, toolbar, side panel, footer, chat or status bar."""
        if on == self.focus_on:
            return
        if on:
            self.show_reader()
            self._before_focus = {
                "side": self.window.side_button.isChecked(),
                "chat": self.window.chat_button.isChecked(),
            }
            for w in (
                self.window.menuBar(),
                self.window.statusBar(),
                self.window.reader.toolbar,
                self.window.reader.footer,
            ):
                w.hide()
            self.window.reader.side.hide()
            self.window.chat.hide()
        else:
            before, self._before_focus = self._before_focus, {}
            for w in (
                self.window.menuBar(),
                self.window.statusBar(),
                self.window.reader.toolbar,
                self.window.reader.footer,
            ):
                w.show()
            self.set_side_visible(before.get("side", False))
            self.set_chat_visible(before.get("chat", True))
        self.focus_on = on
        self.window.action_leave_focus.setEnabled(on)
        if self.window.reader.view is not None:
            self.window.reader.view.setFocus()

    def toggle_focus_mode(self) -> None:
        self.set_focus_mode(not self.focus_on)

    def focus_chat(self) -> None:
        """Ctrl+L: the chat's input, showing the chat first when it is hidden."""
        if self.focus_on:
            self.set_focus_mode(False)
        self.show_reader()
        if not self.chat_visible():
            self.set_chat_visible(True)
        if hasattr(self.window.chat, "focus_input"):
            self.window.chat.focus_input()

    def view_changed(self, _index: int) -> None:
        if self.sized or not self.window.reading_view_built():
            return
        if self.window.views.currentWidget() is not self.window.splitter:
            return
        # the first time the reading view shows (and nothing was restored): the chat's
        # default width follows the window's width
        self.sized = True
        self.window.splitter.setGeometry(
            self.window.views.contentsRect()
        )  # hidden pages keep old sizes
        total = sum(self.window.splitter.sizes())
        self.chat_width = default_chat_width(self.window.width())
        if self.window.chat.isVisibleTo(self.window.splitter):
            self.window.splitter.setSizes([total - self.chat_width, self.chat_width])
