"""The window's menus and the buttons it adds to the reader's toolbar: every action in one
place, each named ``window.action_<name>`` when tests or other code need it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolButton

from desktop import accessibility

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow

# each theme's menu entry (a mnemonic of its own; Ctrl+Alt+1… in this order)
THEME_MENU = (
    ("system", "&System theme (follows the desktop)"),
    ("light", "Light th&eme"),
    ("sepia", "Sepi&a theme"),
    ("dark", "&Dark theme"),
    ("contrast", "High &contrast theme"),
)


def add_action(
    window: MainWindow,
    menu: QMenu,
    text: str,
    slot: Callable[..., object],
    shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
    name: str = "",
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(slot)
    menu.addAction(action)
    window.addAction(action)  # its keys work in focus mode too, with the menu bar hidden
    if name:
        setattr(window, f"action_{name}", action)
    return action


def tick_theme(window: MainWindow) -> None:
    """Put the View menu's tick on the theme the window shows."""
    current = getattr(window, "theme", "") or "system"
    themes = window.findChild(QActionGroup, "themes")
    for action in themes.actions() if themes is not None else ():
        action.setChecked(action.data() == current)


def set_whole_answers(window: MainWindow) -> Callable[[bool], None]:
    """The slot of "Speak whole answers": announce finished answers whole, and keep it."""
    accessibility.whole_answers = window.preferences.whole_answers()

    def toggled(on: bool) -> None:
        accessibility.whole_answers = on
        window.preferences.set_whole_answers(on)

    return toggled


def build_menus(window: MainWindow) -> None:
    """The menu bar: File, View, Book, Help (every action's keys work with the bar hidden)."""
    bar = window.menuBar()
    file = bar.addMenu("&File")
    add_action(
        window, file, "&Open…", window.books.choose_files, QKeySequence.StandardKey.Open, "open"
    )
    add_action(
        window,
        file,
        "&Export highlights…",
        window.books.export_highlights,
        "Ctrl+Shift+E",
        "export",
    )
    add_action(
        window,
        file,
        "Search the &library…",
        window.panels.open_library_search,
        "Ctrl+Alt+F",
        "library_search",
    )
    file.addSeparator()
    add_action(window, file, "&Settings…", window.panels.open_settings, "Ctrl+,", "settings")
    file.addSeparator()
    add_action(window, file, "&Quit", window.close, QKeySequence.StandardKey.Quit, "quit")
    view = bar.addMenu("&View")
    add_action(
        window,
        view,
        "&Next page",
        lambda: window.reader.next_page(),
        QKeySequence.StandardKey.MoveToNextPage,
        "next",
    )
    add_action(
        window,
        view,
        "&Previous page",
        lambda: window.reader.previous_page(),
        QKeySequence.StandardKey.MoveToPreviousPage,
        "previous",
    )
    # (the arrows turn as the book's pages do: Ctrl+Left goes forward in a right-to-left book)
    add_action(
        window, view, "Page to the right (arrow)", lambda: window.reader.page_towards("right"),
        "Ctrl+Right",
    )  # fmt: skip
    add_action(
        window, view, "Page to the left (arrow)", lambda: window.reader.page_towards("left"),
        "Ctrl+Left",
    )  # fmt: skip
    add_action(window, view, "&Go to page…", window.books.go_to_page_dialog, "Ctrl+G", "goto")
    view.addSeparator()
    add_action(
        window,
        view,
        "Zoom &in",
        lambda: window.reader.zoom_in(),
        QKeySequence.StandardKey.ZoomIn,
        "zoom_in",
    )
    add_action(
        window,
        view,
        "Zoom o&ut",
        lambda: window.reader.zoom_out(),
        QKeySequence.StandardKey.ZoomOut,
        "zoom_out",
    )
    add_action(window, view, "Fit &width", lambda: window.reader.fit_width(), "Ctrl+0", "fit")
    view.addSeparator()
    # one checkable group: the current theme has the tick, however it was chosen
    themes = QActionGroup(window)
    themes.setObjectName("themes")
    themes.setExclusive(True)
    for number, (theme, label) in enumerate(THEME_MENU, start=1):
        action = add_action(
            window,
            view,
            label,
            lambda _=False, t=theme: window.set_theme(t),
            f"Ctrl+Alt+{number}",
            f"theme_{theme}",
        )
        action.setCheckable(True)
        action.setData(theme)
        themes.addAction(action)
    tick_theme(window)
    view.aboutToShow.connect(lambda: tick_theme(window))
    view.addSeparator()
    add_action(
        window, view, "&Library / book", window.panes.toggle_library, "Ctrl+B", "toggle_library"
    )
    add_action(
        window, view, "Show/hide con&tents panel", window.panes.toggle_side, "Ctrl+T", "toggle_side"
    )
    add_action(
        window, view, "Show/hide c&hat", window.panes.toggle_chat, "Ctrl+Shift+L", "toggle_chat"
    )
    add_action(
        window,
        view,
        "&Reading settings…",
        window.panels.open_reading_settings,
        "Ctrl+Shift+A",
        "reading",
    )
    caret = add_action(
        window, view, "Caret &browsing", window.panels.set_caret_browsing, "F7", "caret"
    )
    caret.setCheckable(True)
    caret.setToolTip("The arrow keys move a caret through the book; Shift+arrows select")
    whole = add_action(
        window, view, "Spea&k whole answers", set_whole_answers(window), None, "whole"
    )
    whole.setCheckable(True)
    whole.setChecked(accessibility.whole_answers)
    view.addSeparator()
    add_action(window, view, "&Full screen", window.panes.toggle_full_screen, "F11", "full_screen")
    add_action(
        window, view, "F&ocus mode", window.panes.toggle_focus_mode, "Ctrl+Shift+F", "focus_mode"
    )
    window.action_leave_focus = QAction("Leave focus mode", window)
    window.action_leave_focus.setShortcut(QKeySequence("Esc"))
    window.action_leave_focus.triggered.connect(lambda: window.panes.set_focus_mode(False))
    window.action_leave_focus.setEnabled(False)  # Esc belongs to the widgets otherwise
    window.addAction(window.action_leave_focus)
    book = bar.addMenu("&Book")
    add_action(
        window,
        book,
        "&Find in book…",
        window.panes.find_in_book,
        QKeySequence.StandardKey.Find,
        "find",
    )
    add_action(
        window,
        book,
        "&Ask about selection",
        lambda: window.reader.ask_about_selection("ask"),
        "Ctrl+Return",
        "ask",
    )
    add_action(
        window,
        book,
        "&Explain selection",
        lambda: window.reader.ask_about_selection("explain"),
        "Ctrl+E",
    )
    add_action(
        window,
        book,
        "&Highlight selection",
        lambda: window.reader.ask_about_selection("highlight"),
        "Ctrl+H",
    )
    add_action(window, book, "Focus &chat", window.panes.focus_chat, "Ctrl+L", "focus_chat")
    add_action(
        window, book, "&Notes and highlights…", window.panels.open_notes, "Ctrl+Shift+N", "notes"
    )
    add_action(
        window,
        book,
        "&Mark finished",
        lambda: window.reader.finished_box.toggle(),
        "Ctrl+Shift+M",
        "finished",
    )
    add_action(window, book, "Re-rea&d this book", window.books.reread_current, None, "reread")
    add_action(
        window, book, "Repair search &index", window.books.repair_index, None, "repair_index"
    )
    add_action(window, book, "&Remove from library…", window.books.remove_current, None, "remove")
    help_menu = bar.addMenu("&Help")
    add_action(
        window,
        help_menu,
        "&Keyboard shortcuts",
        lambda: _show_shortcuts(window),
        QKeySequence(Qt.Key.Key_F1),
        "shortcuts",
    )
    add_action(window, help_menu, "&Welcome guide", window.books.open_welcome)
    add_action(
        window,
        help_menu,
        "Open &data folder",
        lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(window.paths.data))),
    )
    add_action(window, help_menu, "&About Margin", window.panels.about, None, "about")


def add_reader_buttons(window: MainWindow) -> None:
    """Library, Contents, Reading settings and Chat buttons in the reader's toolbar."""
    bar = window.reader.toolbar.layout()
    assert isinstance(bar, QHBoxLayout)

    def button(
        text: str, name: str, tip: str, slot: Callable[..., object], checkable: bool = False
    ) -> QToolButton:
        b = QToolButton()
        b.setText(text)
        b.setAccessibleName(name)
        b.setToolTip(tip)
        b.setCheckable(checkable)
        b.setAutoRaise(True)
        (b.toggled if checkable else b.clicked).connect(slot)
        return b

    window.library_button = button(
        "Library", "Library", "Your books (Ctrl+B)", window.panes.show_library
    )

    def contents(on: bool) -> None:
        """The Contents button opens the contents (not the tab used last)."""
        window.panes.set_side_visible(on)
        if on:
            window.reader.side.show_panel("Contents")

    window.side_button = button(
        "Contents",
        "Show contents, find and highlights",
        "Contents, Find and Highlights (Ctrl+T)",
        contents,
        True,
    )
    window.reading_button = button(
        "Aa", "Reading settings", "Font, spacing, line length", window.panels.open_reading_settings
    )
    window.chat_button = button(
        "Chat",
        "Show the chat",
        "Show or hide the chat (Ctrl+Shift+L)",
        window.panes.set_chat_visible,
        True,
    )
    window.chat_button.setChecked(True)
    # the View menu's themes colour the whole window: the reader's own page-theme box would
    # only disagree with them, and the toolbar must fit beside the chat at 1024 px
    window.reader.theme_box.hide()
    bar.setSpacing(2)
    bar.insertWidget(0, window.side_button)
    bar.insertWidget(0, window.library_button)
    bar.addWidget(window.reading_button)
    bar.addWidget(window.chat_button)


def _show_shortcuts(window: MainWindow) -> None:
    from desktop.window.shortcut_help import show_shortcuts  # its dialog's classes: on first use

    show_shortcuts(window)
