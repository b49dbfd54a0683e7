"""The Highlights side panel: the book's highlights and their notes, as calibre's. Search
them (words of the text or the note), show only this chapter's, one colour's, one style's or
those with a note; choosing one opens the book at its own place (the anchor's offset when it
has one, else its words on its page). The chosen highlight's note is edited in place under
the list; its colour and style change from the Look menu; Copy puts it on the clipboard with
its citation; Export saves this chapter's or the whole book's highlights as Markdown.

The list follows the book through the reader's events (opened, highlights changed, page
shown, closed); edits act through the reader it is attached to (``attach``): the library, the
open book, its contents, and ``refresh_highlights`` to announce a change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QIcon, QKeyEvent, QKeySequence, QPainter, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.store.highlight_style import HIGHLIGHT_STYLES, STYLE_NAMES
from core.store.library import HIGHLIGHT_COLOURS, HighlightRecord
from desktop.events import BookClosed, BookOpening, Events, HighlightsChanged, PageShown
from desktop.highlights import tools as highlight_tools
from desktop.highlights.look import line_colour
from desktop.reader.pages import ANCHOR_ROLE, PAGE_ROLE, PageLabels
from desktop.theme import highlight_colour
from desktop.widgets import tool_button


class HighlightSource(Protocol):
    def list_highlights(self, book_id: int) -> list[HighlightRecord]: ...


if TYPE_CHECKING:
    from desktop.reader.reader import Reader

ID_ROLE = Qt.ItemDataRole.UserRole + 5  # the highlight's id
STYLE_MARKS = {"underline": "underlined", "strike": "struck through"}
# what the Show box can keep: (label, test on a highlight, or None for "this chapter")
SHOW_ALL, SHOW_CHAPTER, SHOW_NOTED = "All highlights", "This chapter", "With a note"


def swatch(colour: str, style: str) -> QIcon:
    """A small square of the highlight's colour (a bar under it for an underline, a line
    through it for a strike): the list shows each highlight's look at a glance."""
    pixmap = QPixmap(14, 14)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    if style == "highlight":
        painter.fillRect(1, 1, 12, 12, highlight_colour(colour))
    else:
        painter.fillRect(1, 6 if style == "strike" else 11, 12, 3, line_colour(colour))
    painter.end()
    return QIcon(pixmap)


class HighlightsPanel(QWidget):
    requestPlace = Signal(int, str, int)  # page, its words, offset where it starts (-1: unknown)
    requestFocusBook = Signal()

    def __init__(self, events: Events, library: HighlightSource) -> None:
        super().__init__()
        self._library = library
        events.subscribe(BookOpening, lambda e: self._load(e.book.id, e.labels))
        events.subscribe(HighlightsChanged, lambda e: self._load(e.book_id, self.labels))
        events.subscribe(PageShown, self._page_changed)
        events.subscribe(BookClosed, lambda _e: self.clear())
        self.reader: Reader | None = None
        self.highlights: list[HighlightRecord] = []
        self.labels = PageLabels()
        self._current_id: int | None = None
        self.search = QLineEdit(placeholderText="Search highlights and notes…")
        self.search.setAccessibleName("Search highlights")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.show_matching)
        self.show_box = QComboBox()
        self.show_box.addItems([SHOW_ALL, SHOW_CHAPTER, SHOW_NOTED])
        self.show_box.addItems([c.capitalize() for c in HIGHLIGHT_COLOURS])
        self.show_box.addItems([STYLE_MARKS[s].capitalize() for s in ("underline", "strike")])
        self.show_box.currentIndexChanged.connect(self.show_matching)
        self.show_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.show_box.setMinimumContentsLength(8)
        show_label = QLabel("Sho&w:")
        show_label.setBuddy(self.show_box)
        self.list = QListWidget()
        self.list.setAccessibleName("Highlights")
        self.list.setWordWrap(True)
        self.list.itemActivated.connect(self.go_item)
        self.list.itemClicked.connect(self.go_item)
        self.list.itemClicked.connect(lambda *_: self.requestFocusBook.emit())
        self.list.currentItemChanged.connect(self._chosen)
        self.list.installEventFilter(self)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(
            lambda pos: self.item_menu().exec(self.list.viewport().mapToGlobal(pos))
        )
        self.shown_label = QLabel("")
        self.shown_label.hide()
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("A note on the chosen highlight…")
        self.note.setAccessibleName("Note on the chosen highlight")
        self.note.setTabChangesFocus(True)  # Tab leaves the box: no keyboard trap
        self.note.setMaximumHeight(90)
        self.note.installEventFilter(self)
        self.save_button = tool_button("Save note")
        self.save_button.setToolTip("Save the note (Ctrl+Enter in the note)")
        self.save_button.clicked.connect(self.save_note)
        self.look_button = tool_button("Look")
        self.look_button.setAccessibleName("Colour and style of the highlight")
        self.look_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.look_button.setMenu(self._look_menu(QMenu(self.look_button)))
        self.copy_button = tool_button("Copy")
        self.copy_button.setAccessibleName("Copy with citation")
        self.copy_button.setToolTip("Copy the highlight with its citation (Ctrl+C)")
        self.copy_button.clicked.connect(self.copy_current)
        self.delete_button = tool_button("Delete")
        self.delete_button.setAccessibleName("Delete the highlight")
        self.delete_button.clicked.connect(self.delete_current)
        self.export_button = tool_button("Export")
        self.export_button.setAccessibleName("Export highlights as Markdown")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        export_menu = QMenu(self.export_button)
        export_menu.addAction("This chapter's highlights…", lambda: self.export(chapter=True))
        export_menu.addAction("All highlights in the book…", lambda: self.export(chapter=False))
        self.export_button.setMenu(export_menu)
        for button in (self.look_button, self.export_button):
            button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0; }")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.search)
        show_row = QHBoxLayout()
        show_row.addWidget(show_label)
        show_row.addWidget(self.show_box, 1)
        layout.addLayout(show_row)
        layout.addWidget(self.shown_label)
        layout.addWidget(self.list, 1)
        # two short rows: the panel stays narrow beside the book (side_panels.SIDE_MIN)
        buttons = QHBoxLayout()
        for b in (self.look_button, self.copy_button, self.delete_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self.note)
        more = QHBoxLayout()
        more.addWidget(self.save_button)
        more.addStretch(1)
        more.addWidget(self.export_button)
        layout.addLayout(more)
        self._chosen(None)

    def attach(self, reader: Reader) -> None:
        self.reader = reader

    def _load(self, book_id: int, labels: PageLabels) -> None:
        self.clear()
        self.fill(self._library.list_highlights(book_id), labels)

    def _page_changed(self, *_: object) -> None:
        if self.show_box.currentText() == SHOW_CHAPTER:  # "this chapter" follows the page
            self.show_matching()

    # the list (the reader calls these) ---------------------------------------------------

    def clear(self) -> None:
        self.highlights = []
        self.list.clear()
        self.shown_label.setText("")

    def count(self) -> int:
        return self.list.count()

    def item(self, row: int) -> QListWidgetItem | None:
        return self.list.item(row)

    def fill(self, highlights: Sequence[HighlightRecord], labels: PageLabels) -> None:
        self.highlights, self.labels = list(highlights), labels
        self.show_matching()

    def _keeps(self, h: HighlightRecord) -> bool:
        words = self.search.text().lower().split()
        if words and not all(w in f"{h.text} {h.note}".lower() for w in words):
            return False
        show = self.show_box.currentText()
        if show == SHOW_CHAPTER:
            return self._chapter(h.page) == self._chapter(self._page())
        if show == SHOW_NOTED:
            return bool(h.note.strip())
        if show.lower() in HIGHLIGHT_COLOURS:
            return h.colour == show.lower()
        for style, word in STYLE_MARKS.items():
            if show == word.capitalize():
                return h.style == style
        return True

    def show_matching(self) -> None:
        """List the highlights the search and the Show box keep, the chosen one still chosen."""
        keep = self._current_id
        self.list.blockSignals(True)
        self.list.clear()
        shown = [h for h in self.highlights if self._keeps(h)]
        for h in shown:
            self.list.addItem(self._item(h))
            if h.id == keep:
                self.list.setCurrentRow(self.list.count() - 1)
        self.list.blockSignals(False)
        total = len(self.highlights)
        self.shown_label.setText(
            "" if len(shown) == total else f"{len(shown)} of {total} highlights shown"
        )
        self.shown_label.setVisible(len(shown) != total)
        self._chosen(self.list.currentItem())

    def _item(self, h: HighlightRecord) -> QListWidgetItem:
        look = ", ".join(w for w in (h.colour, STYLE_MARKS.get(h.style, "")) if w)
        note = f"\nNote: {h.note}" if h.note else ""
        item = QListWidgetItem(f"{self.labels.long(h.page)} ({look}) — {h.text[:160]}{note}")
        item.setData(PAGE_ROLE, (h.page, h.text))
        item.setData(ID_ROLE, h.id)
        item.setToolTip(h.text[:600])
        item.setIcon(swatch(h.colour, h.style))
        start = h.anchor.get("start") if isinstance(h.anchor, dict) else None
        if isinstance(start, dict) and isinstance(start.get("offset"), int):
            item.setData(ANCHOR_ROLE, (int(start.get("page", h.page)), start["offset"]))
        return item

    def go_item(self, item: QListWidgetItem) -> None:
        data = item.data(PAGE_ROLE)
        if not data:
            return
        page, words = data
        anchor = item.data(ANCHOR_ROLE)
        if anchor:  # a highlight that knows exactly where it starts
            self.requestPlace.emit(int(anchor[0]), words, int(anchor[1]))
        else:
            self.requestPlace.emit(int(page), words, -1)

    # the chosen highlight ------------------------------------------------------------------

    def current(self) -> HighlightRecord | None:
        item = self.list.currentItem()
        wanted = item.data(ID_ROLE) if item is not None else None
        return next((h for h in self.highlights if h.id == wanted), None)

    def _chosen(self, item: QListWidgetItem | None) -> None:
        h = self.current() if item is not None else None
        self._current_id = h.id if h is not None else self._current_id
        self.note.blockSignals(True)
        self.note.setPlainText(h.note if h is not None else "")
        self.note.blockSignals(False)
        for w in (self.note, self.save_button, self.look_button, self.copy_button):
            w.setEnabled(h is not None)
        self.delete_button.setEnabled(h is not None)

    def _look_menu(self, menu: QMenu) -> QMenu:
        for colour in HIGHLIGHT_COLOURS:
            pick = QAction(colour.capitalize(), menu)
            pick.triggered.connect(lambda _=False, c=colour: self.set_look(colour=c))
            menu.addAction(pick)
        menu.addSeparator()
        for style in HIGHLIGHT_STYLES:
            look = QAction(STYLE_NAMES[style], menu)
            look.triggered.connect(lambda _=False, s=style: self.set_look(style=s))
            menu.addAction(look)
        return menu

    def item_menu(self) -> QMenu:
        """The chosen highlight's actions (the list's context menu)."""
        menu = QMenu(self)
        has = self.current() is not None
        for text, slot in (
            ("Go to it", lambda: self._go_current()),
            ("Edit note", lambda: self.note.setFocus()),
            ("Copy with citation", self.copy_current),
            ("Delete", self.delete_current),
        ):
            action = QAction(text, menu)
            action.setEnabled(has)
            action.triggered.connect(slot)
            menu.addAction(action)
        look = self._look_menu(menu.addMenu("Colour and style"))
        look.setEnabled(has)
        return menu

    def _go_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.go_item(item)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.note
            and event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            event.accept()  # Ctrl+Enter saves the note here (not "Ask about selection")
            return True
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if watched is self.list and event.matches(QKeySequence.StandardKey.Copy):
                self.copy_current()
                return True
            if watched is self.list and event.key() == Qt.Key.Key_Delete:
                self.delete_current()
                return True
            if watched is self.list and event.key() == Qt.Key.Key_F2:
                self.note.setFocus()
                return True
            if (
                watched is self.note
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier
            ):
                self.save_note()
                self.list.setFocus()
                return True
        if watched is self.note and event.type() == QEvent.Type.FocusOut:
            self.save_note()  # a note is never lost by clicking elsewhere
        return super().eventFilter(watched, event)

    # acting on it (through the reader) -----------------------------------------------------

    def _page(self) -> int:
        return self.reader.page if self.reader is not None else 1

    def _chapter(self, page: int) -> str:
        return highlight_tools.chapter_title(self.reader, page)

    def save_note(self) -> None:
        h = self.current()
        text = self.note.toPlainText().strip()
        if h is None or self.reader is None or text == h.note.strip():
            return
        highlight_tools.update(self.reader, h.id, note=text)

    def set_look(self, *, colour: str | None = None, style: str | None = None) -> None:
        h = self.current()
        if h is not None and self.reader is not None:
            highlight_tools.update(self.reader, h.id, colour=colour, style=style)

    def delete_current(self) -> None:
        h = self.current()
        if h is not None and self.reader is not None:
            self._current_id = None
            highlight_tools.delete(self.reader, h.id)

    def copy_current(self) -> None:
        h = self.current()
        if h is not None and self.reader is not None:
            highlight_tools.copy_with_citation(self.reader, h)

    def export(self, chapter: bool) -> str:
        """Save this chapter's (or the book's) highlights as Markdown: the sentence shown."""
        if self.reader is None:
            return ""
        return highlight_tools.export(self, self.reader, self.highlights, chapter=chapter)
