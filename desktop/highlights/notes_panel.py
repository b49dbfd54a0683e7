"""Notes and highlights of a book: the assistant's saved notes, the reader's notes and
highlights; edit, delete, go to the page, export to Markdown."""

from __future__ import annotations

import sys
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.export.markdown import export_file_name, export_highlights, highlights_to_markdown
from core.store.library import BookInfo, HighlightRecord, Library, NoteRecord
from desktop.requests import OpenPageRequest
from desktop.tasks import in_background

ROLE = Qt.ItemDataRole.UserRole + 3
LOST_ROLE = Qt.ItemDataRole.UserRole + 4  # True: not found when the book was read again


# a book, its notes and highlights, and which of them were lost at the last re-read
type _Found = tuple[BookInfo, list[NoteRecord], list[HighlightRecord], set[tuple[str, int]]]


class NotesPanel(QWidget):
    requestOpenPage = Signal(object)
    filled = Signal()  # the list shows the book's notes (read on a worker thread)

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Notes and highlights")
        self.setAccessibleName("Notes and highlights")
        self.library = library
        self.book_id: int | None = None
        self._generation = 0
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.items = QListWidget()
        self.items.setWordWrap(True)
        self.items.setAccessibleName("Notes and highlights list")
        self.items.itemActivated.connect(self._go)
        self.items.itemDoubleClicked.connect(self._go)
        self.add_button = QPushButton("Add note…")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete")
        self.export_button = QPushButton("Export to Markdown…")
        for b in (self.add_button, self.edit_button, self.delete_button, self.export_button):
            b.setAccessibleName(b.text().rstrip("…"))
        self.add_button.clicked.connect(self.add_note)
        self.edit_button.clicked.connect(self.edit_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.export_button.clicked.connect(self.export)
        row = QHBoxLayout()
        for b in (self.add_button, self.edit_button, self.delete_button):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.items, 1)
        layout.addLayout(row)
        self.resize(520, 560)

    def set_book(self, book_id: int | None) -> None:
        self.book_id = book_id or None
        self.refresh()

    def refresh(self) -> None:
        """Show the book's notes and highlights (read on a worker thread)."""
        self._generation += 1
        generation, book_id = self._generation, self.book_id
        if book_id is None:
            self._fill(generation, None)
            return

        def read() -> _Found:
            book = self.library.get_book(book_id)
            lost = {(a.kind, a.id) for a in self.library.lost_anchors(book_id)}
            return (
                book,
                self.library.list_notes(book_id),
                self.library.list_highlights(book_id),
                lost,
            )

        def gone(exc: Exception) -> None:
            if not isinstance(exc, MarginError):  # a bug: the global hook logs it
                sys.excepthook(type(exc), exc, exc.__traceback__)
                return
            if generation == self._generation:
                self.book_id = None
                self.refresh()

        in_background(read, then=lambda found: self._fill(generation, found), failed=gone)

    def _fill(
        self,
        generation: int,
        found: _Found | None,
    ) -> None:
        if generation != self._generation or not shiboken6.isValid(self.items):
            return  # another book was chosen meanwhile, or the panel is gone
        self.items.clear()
        if found is None:
            self.title.setText("Open a book to see its notes and highlights.")
            return
        book, notes, highlights, lost = found
        ours = {key for key in lost if key[0] in ("note", "highlight")}
        title = f"<b>{book.title}</b>"
        if ours:
            count = len(ours)
            title += (
                f"<br>{count} of these no longer match{'es' if count == 1 else ''} the book's "
                "text since it was read again: marked “Not found”, kept at the old page."
            )
        self.title.setText(title)
        for note in notes:
            who = "Saved by the assistant" if note.source == "agent" else "Your note"
            where = f", p. {note.page}" if note.page else ""
            item = QListWidgetItem(f"{who}{where}:\n{note.text}")
            item.setData(ROLE, ("note", note.id, note.page, note.text))
            self._lost(item, ("note", note.id) in lost, note.page)
            self.items.addItem(item)
        for h in highlights:
            extra = f"\nNote: {h.note}" if h.note else ""
            item = QListWidgetItem(f"Highlight, p. {h.page} ({h.colour}):\n“{h.text}”{extra}")
            item.setData(ROLE, ("highlight", h.id, h.page, h.text))
            self._lost(item, ("highlight", h.id) in lost, h.page)
            self.items.addItem(item)
        self.filled.emit()

    @staticmethod
    def _lost(item: QListWidgetItem, lost: bool, page: int | None) -> None:
        """A note or highlight whose words were not found when the book was read again:
        said in its text (read aloud too), its tooltip, and in italics."""
        item.setData(LOST_ROLE, lost)
        if not lost:
            return
        where = f"p. {page}" if page else "its old place"
        item.setText(f"Not found after re-reading (kept at {where}) — {item.text()}")
        item.setToolTip(
            "The book was read again and these words are no longer in its text. "
            "It stays at its old page; edit or delete it if it no longer fits."
        )
        font = item.font()
        font.setItalic(True)
        item.setFont(font)

    def markdown(self) -> str:
        assert self.book_id is not None
        book = self.library.get_book(self.book_id)
        return highlights_to_markdown(
            book, self.library.list_highlights(book.id), self.library.list_notes(book.id)
        )

    def _selected(self) -> tuple[str, int, int | None, str] | None:
        item = self.items.currentItem()
        return item.data(ROLE) if item is not None else None

    def _go(self, item: QListWidgetItem) -> None:
        kind, _id, page, text = item.data(ROLE)
        if page and self.book_id is not None:
            self.requestOpenPage.emit(
                OpenPageRequest(self.book_id, int(page), text if kind == "highlight" else "")
            )

    def add_note(self) -> None:
        if self.book_id is None:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Add note", "Note:")
        if ok and text.strip():
            self.library.add_note(self.book_id, text)
            self.refresh()

    def edit_selected(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        kind, item_id, _page, _text = selected
        if kind == "note":
            current = next(
                n.text for n in self.library.list_notes(self.book_id or 0) if n.id == item_id
            )
            text, ok = QInputDialog.getMultiLineText(self, "Edit note", "Note:", current)
            if ok and text.strip():
                self.library.update_note(item_id, text)
        else:
            current = next(
                h.note for h in self.library.list_highlights(self.book_id or 0) if h.id == item_id
            )
            text, ok = QInputDialog.getMultiLineText(self, "Highlight note", "Note:", current)
            if ok:
                self.library.update_highlight(item_id, note=text.strip())
        self.refresh()

    def delete_selected(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        kind, item_id, _page, _text = selected
        if (
            QMessageBox.question(self, "Delete", f"Delete this {kind}?")
            != QMessageBox.StandardButton.Yes
        ):
            return
        if kind == "note":
            self.library.delete_note(item_id)
        else:
            self.library.delete_highlight(item_id)
        self.refresh()

    def export(self) -> None:
        if self.book_id is None:
            return
        book = self.library.get_book(self.book_id)
        name, _ = QFileDialog.getSaveFileName(
            self,
            "Export notes and highlights",
            str(Path.home() / export_file_name(book.title, "notes")),
            "Markdown (*.md)",
        )
        if name:
            export_highlights(self.library, book.id, Path(name))
