"""The bar a highlight opens where it is (as in calibre and KOReader): clicking a highlight,
or Enter with the caret in it, shows its colours, Note, Ask, Copy and Delete beside it. In a
PDF the same: a click on a highlight, or Enter with the selection in one (with no selection,
the first highlight on screen).

A note is written in the bar's own line (Enter keeps it, Esc leaves it as it was): nothing
asks for a note when a highlight is made. The bar takes the keyboard when Enter opened it
(Tab goes through its buttons, Esc closes it and gives the book the keyboard back); a click
elsewhere, a page turn or a new selection closes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.store.library import HighlightRecord
from desktop.accessibility import announce
from desktop.highlights.margin_marks import stored_offset
from desktop.reader.selection_bar import BAR_COLOURS
from desktop.requests import AskRequest
from desktop.theme import highlight_colour
from desktop.widgets import tool_button

if TYPE_CHECKING:
    from desktop.highlights.mark_views import HighlightViews
    from desktop.reader.reader import Reader


def _swatch(colour: str) -> QIcon:
    """A square of the colour; framed in the text's colour when it is the highlight's."""
    tone = highlight_colour(colour)
    plain = QPixmap(16, 16)
    plain.fill(QColor(tone.red(), tone.green(), tone.blue()))
    framed = QPixmap(plain)
    painter = QPainter(framed)
    painter.setPen(QPen(QColor(40, 40, 40), 3))
    painter.drawRect(1, 1, 13, 13)
    painter.end()
    icon = QIcon()
    icon.addPixmap(plain, QIcon.Mode.Normal, QIcon.State.Off)
    icon.addPixmap(framed, QIcon.Mode.Normal, QIcon.State.On)
    return icon


class HighlightBar(QFrame):
    chosen = Signal(str)  # "colour:NAME", "note", "ask", "copy", "delete"
    noteDone = Signal(str)  # the note as written (Enter)
    closed = Signal()  # Esc

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("highlightBar")
        self.setAccessibleName("Highlight actions")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 2, 4, 2)
        column.setSpacing(2)
        row = QHBoxLayout()
        row.setSpacing(2)
        column.addLayout(row)
        self.buttons: dict[str, QToolButton] = {}
        for colour in BAR_COLOURS:
            button = QToolButton()
            button.setIcon(_swatch(colour))
            button.setCheckable(True)
            button.setAccessibleName(f"Colour {colour}")
            button.setToolTip(f"Make this highlight {colour}")
            self._add(row, f"colour:{colour}", button)
        for key, label, tip in (
            ("note", "Note…", "Write a note on this highlight"),
            ("ask", "Ask…", "Ask about this passage"),
            ("copy", "Copy", "Copy the highlighted text"),
            ("delete", "Delete", "Delete this highlight"),
        ):
            button = tool_button(label)
            button.setAccessibleName(label.rstrip("…"))
            button.setToolTip(tip)
            self._add(row, key, button)
        self.note = QLineEdit()
        self.note.setAccessibleName("Note")
        self.note.setPlaceholderText("A note… (Enter keeps it, Esc leaves it)")
        self.note.setMinimumWidth(320)
        self.note.returnPressed.connect(lambda: self.noteDone.emit(self.note.text().strip()))
        self.note.hide()
        column.addWidget(self.note)
        self.hide()

    def _add(self, row: QHBoxLayout, key: str, button: QToolButton) -> None:
        button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # Tab reaches every action
        button.clicked.connect(lambda _=False, k=key: self.chosen.emit(k))
        row.addWidget(button)
        self.buttons[key] = button

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            if self.note.isVisible():
                self.note.hide()
                self.adjustSize()
                self.buttons["note"].setFocus()
            else:
                self.closed.emit()
            return
        super().keyPressEvent(event)

    def set_record(self, record: HighlightRecord) -> None:
        for colour in BAR_COLOURS:
            self.buttons[f"colour:{colour}"].setChecked(colour == record.colour)
        self.buttons["note"].setText("Edit note…" if record.note else "Note…")
        self.note.setText(record.note)

    def show_for(self, record: HighlightRecord, point: QPoint) -> None:
        """Show the bar for ``record`` below ``point`` (in the parent), or above it when
        there is no room below."""
        self.set_record(record)
        self.note.hide()
        self.adjustSize()
        parent = self.parentWidget()
        x, y = point.x() - self.width() // 2, point.y() + 8
        if parent is not None:
            x = max(4, min(x, parent.width() - self.width() - 4))
            if y + self.height() + 40 > parent.height():
                y = point.y() - self.height() - 28
            y = max(4, y)
        self.move(x, y)
        self.show()
        self.raise_()

    def open_note(self) -> None:
        self.note.show()
        self.adjustSize()
        self.note.setFocus()
        self.note.selectAll()


class HighlightActions(QObject):
    """What the reader does with a highlight in the book: the bar and its actions."""

    def __init__(self, reader: Reader, views: HighlightViews) -> None:
        super().__init__(reader)
        self.reader = reader
        self.views = views  # a highlight clicked, a scroll, the selection; the stored pages
        self.bar = HighlightBar(reader)
        self.current: HighlightRecord | None = None
        self.bar.chosen.connect(self.act)
        self.bar.noteDone.connect(self.save_note)
        self.bar.closed.connect(self.close)
        views.highlightClicked.connect(self.open)
        views.scrolledTo.connect(lambda *_: self.close(refocus=False))
        views.textSelectionChanged.connect(lambda: self.close(refocus=False))
        views.pdfSelected.connect(lambda *_: self.close(refocus=False))
        QApplication.instance().focusChanged.connect(self._focus_moved)  # type: ignore[union-attr]

    def _record(self, highlight_id: int) -> HighlightRecord | None:
        book = self.reader.book
        if book is None:
            return None
        found = [h for h in self.reader.library.list_highlights(book.id) if h.id == highlight_id]
        return found[0] if found else None

    def open(self, highlight_id: int, where: QPoint, by_keys: bool = False) -> None:
        """The bar for a highlight, at a global point (a click on no highlight closes it);
        it takes the keyboard when a key opened it."""
        record = self._record(highlight_id) if highlight_id else None
        if record is None:
            self.close(refocus=False)
            return
        self.current = record
        line = self.reader.mapFromGlobal(where)
        self.bar.show_for(record, line)
        if by_keys:
            self.bar.buttons[f"colour:{record.colour}"].setFocus()
        announce(self.reader, f"Highlight on p. {record.page}: colour, note, ask, copy, delete.")

    def close(self, refocus: bool = True) -> None:
        if not self.bar.isVisible():
            return
        focus = QApplication.focusWidget()
        had_focus = focus is not None and self.bar.isAncestorOf(focus)
        self.bar.hide()
        self.current = None
        view = self.reader.view
        if refocus and had_focus and view is not None:
            view.setFocus()

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        """The keyboard went somewhere else than the bar or the book: the bar closes."""
        outside = new is not None and not self.bar.isAncestorOf(new)
        if self.bar.isVisible() and outside and new is not self.reader.view:
            self.close(refocus=False)

    def act(self, action: str) -> None:
        record, reader = self.current, self.reader
        if record is None or reader.book is None:
            return
        if action.startswith("colour:"):
            colour = action.split(":", 1)[1]
            self.current = reader.library.update_highlight(record.id, colour=colour)
            reader.refresh_highlights()
            self.bar.set_record(self.current)
            announce(reader, f"Highlight made {colour}.")
        elif action == "note":
            self.bar.open_note()
        elif action == "copy":
            QApplication.clipboard().setText(record.text)
            announce(reader, "Highlighted text copied.")
            self.close()
        elif action == "delete":
            reader.library.delete_highlight(record.id)
            self.close()
            reader.refresh_highlights()
            announce(reader, "Highlight deleted.")
        elif action == "ask":
            near = stored_offset(self.views, record.page, record.anchor)
            self.close()
            reader.requestAsk.emit(
                AskRequest(reader.book.id, record.page, record.text, "ask", "", near)
            )

    def save_note(self, text: str) -> None:
        record, reader = self.current, self.reader
        if record is None:
            return
        reader.library.update_highlight(record.id, note=text)
        self.close()
        reader.refresh_highlights()
        announce(reader, "Note saved." if text else "Note removed.")
