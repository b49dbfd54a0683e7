"""Help → Keyboard shortcuts (F1): every shortcut of the window, read from its actions and
shortcuts themselves when the list opens, so it can never disagree with the keys that work.

``shortcut_rows(window)`` gathers them: each ``QAction`` with a shortcut (grouped by the menu
it is in, or "Reader" for the reader's own keys) and each ``QShortcut`` (its ``whatsThis``
says what it does). A few keys that belong to a box rather than to an action (Enter in the
question box or in Find, Tab between panels) come after them, under "In text boxes"."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.reader.reading_keys import key_rows

# keys a text box handles itself (no action to read them from)
BOX_KEYS = (
    ("Enter", "Send the question (in the question box)"),
    ("Shift+Enter", "A new line in the question (in the question box)"),
    ("Enter", "Find, then the next match (in the Find box)"),
    ("Shift+Enter", "The previous match (in the Find box)"),
    ("Tab", "The next control: toolbar, side panel, book, chat"),
    ("Shift+Tab", "The previous control"),
)


@dataclass(frozen=True)
class ShortcutRow:
    group: str  # the menu it is in ("File", "View" …), "Reader", "Chat", "In text boxes"
    what: str  # what it does, as its menu says it
    keys: str  # as this platform writes them ("Ctrl+Shift+E")


def plain(text: str) -> str:
    """A menu text without its mnemonic marker and trailing dots ("&Open…" → "Open")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…. ")


def key_text(sequences: list[QKeySequence]) -> str:
    return " or ".join(
        s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences if not s.isEmpty()
    )


def _group(action: QAction) -> str:
    for owner in action.associatedObjects():
        if isinstance(owner, QMenu) and owner.title():
            return plain(owner.title())
    parent = action.parent()
    name = type(parent).__name__ if parent is not None else ""
    return {"Reader": "Reader", "ChatPane": "Chat"}.get(name, "Window")


def shortcut_rows(window: QWidget) -> list[ShortcutRow]:
    """Every shortcut under ``window`` (actions and shortcuts, by group, in menu order)."""
    rows: list[ShortcutRow] = []
    seen: set[int] = set()
    for action in window.findChildren(QAction):
        keys = key_text(action.shortcuts())
        if not keys or id(action) in seen:
            continue
        seen.add(id(action))
        what = plain(action.text()) or plain(action.toolTip())
        rows.append(ShortcutRow(_group(action), what, keys))
    for shortcut in window.findChildren(QShortcut):
        keys = key_text([shortcut.key()])
        if keys:
            parent = shortcut.parent()
            group = "Chat" if type(parent).__name__ == "ChatPane" else "Window"
            rows.append(ShortcutRow(group, shortcut.whatsThis(), keys))
    order = ["File", "View", "Book", "Help", "Reader", "Chat", "Window"]
    rows.sort(key=lambda r: order.index(r.group) if r.group in order else len(order))
    rows += [ShortcutRow("In the book", what, keys) for keys, what in key_rows()]
    rows += [ShortcutRow("In text boxes", what, keys) for keys, what in BOX_KEYS]
    return rows


class ShortcutHelp(QDialog):
    """The list, with a box that filters it by what a key does or by the key itself."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(560, 620)
        self.rows = shortcut_rows(window)
        self.filter = QLineEdit(placeholderText="Filter: a word or a key (Ctrl+H)…")
        self.filter.setClearButtonEnabled(True)
        label = QLabel("&Filter:")
        label.setBuddy(self.filter)
        self.table = QTableWidget(0, 3)
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Where", "What it does", "Keys"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (no keyboard trap)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.filter.textChanged.connect(self.show_rows)
        self.show_rows("")
        self.filter.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_rows(self, text: str) -> None:
        words = text.lower().split()
        shown = [
            r for r in self.rows if all(w in f"{r.group} {r.what} {r.keys}".lower() for w in words)
        ]
        self.table.setRowCount(len(shown))
        for i, row in enumerate(shown):
            for j, value in enumerate((row.group, row.what, row.keys)):
                self.table.setItem(i, j, QTableWidgetItem(value))

    def listed(self) -> list[tuple[str, str]]:
        """(what, keys) of every row shown."""
        out = []
        for i in range(self.table.rowCount()):
            what, keys = self.table.item(i, 1), self.table.item(i, 2)
            out.append((what.text() if what else "", keys.text() if keys else ""))
        return out


def show_shortcuts(window: QWidget) -> ShortcutHelp:
    """Open the list (one at a time: F1 again brings it to the front)."""
    existing = window.findChild(ShortcutHelp)
    dialog = existing if isinstance(existing, ShortcutHelp) and existing.isVisible() else None
    if dialog is None:
        dialog = ShortcutHelp(window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
