"""Threads in the reader: the side panel's Threads tab (a book's conversations about a passage,
in book order), the marks beside their passages (``margin_marks``), and what opening one
does — the thread in the chat pane, the book at its passage with the words marked.

``install_threads(window)`` wires it all in one place; everything read from the store is
read on a worker thread (``desktop.tasks.in_background``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.store.anchoring import AnchoredMark, LostAnchor, anchored_marks
from core.store.conversations import ConversationInfo
from desktop.events import BookClosed, BookOpened, ConversationChanged, HighlightsChanged
from desktop.highlights.margin_marks import MarginMark, MarginMarks, mark_exactly
from desktop.tasks import in_background

if TYPE_CHECKING:
    from desktop.highlights.mark_views import ShownViews
    from desktop.window.main_window import MainWindow

THREAD_ROLE = Qt.ItemDataRole.UserRole + 1


class ThreadsPanel(QWidget):
    """The book's threads in book order: "p. 40 — “…” (3)"."""

    requestThread = Signal(int)  # conversation id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Threads")
        self.list = QListWidget()
        self.list.setAccessibleName("Threads in book order")
        self.list.setWordWrap(True)
        self.list.itemActivated.connect(self._chosen)
        self.list.itemClicked.connect(self._chosen)
        self.empty = QLabel(
            "No threads yet. Select a passage and ask about it (Ask, Explain, Define…): "
            "the conversation stays with the passage, marked in the margin."
        )
        self.empty.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addStretch(0)
        self.fill([])

    def fill(self, threads: list[ConversationInfo]) -> None:
        self.list.clear()
        for t in threads:
            q = t.quote
            if q is None:  # (a thread is a conversation with a quote: never)
                continue
            words = q.exact if len(q.exact) <= 110 else q.exact[:109] + "…"
            lost = "  (not found after re-reading)" if q.lost else ""
            count = f"  · {t.message_count} messages" if t.message_count else ""
            item = QListWidgetItem(f"p. {q.page} — “{words}”{count}{lost}")
            item.setData(THREAD_ROLE, t.id)
            item.setToolTip(t.title)
            self.list.addItem(item)
        self.list.setVisible(bool(threads))
        self.empty.setVisible(not threads)

    def _chosen(self, item: QListWidgetItem) -> None:
        self.requestThread.emit(int(item.data(THREAD_ROLE)))


class Threads(QObject):
    """Keeps the panel and the margin marks of the open book up to date."""

    changed = Signal()  # the marks and the list were read again (tests wait for it)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.app = window.app
        self.reader = window.reader
        self.views: ShownViews = window.reader.views  # the view on screen, its pages
        self.panel = ThreadsPanel()
        self.panel.requestThread.connect(self.open_thread)
        self.marks: MarginMarks | None = None
        self.book_id: int | None = None
        self._threads: dict[int, ConversationInfo] = {}
        self._generation = 0
        self.reader.side.add_panel("Threads", self.panel)

    def book_opened(self, book_id: int | None) -> None:
        """A book (or the same one again) is shown: new marks on its view, its threads read."""
        self.book_id = book_id or None
        view = self.views.view
        if self.marks is not None and shiboken6.isValid(self.marks):
            if self.marks.view is view:
                self.refresh()
                return
            self.marks.deleteLater()
        self.marks = None
        if isinstance(view, QAbstractScrollArea) and self.book_id is not None:
            pages = self.views.pages  # the pages the view reads, in batches, cached
            self.marks = MarginMarks(view, (lambda n: pages(n).text) if pages is not None else None)
            self.marks.requestThread.connect(self.open_thread)
            self.marks.requestNote.connect(self.open_note)
        self.refresh()

    def refresh(self, *_: object) -> None:
        book_id = self.book_id
        if book_id is None:
            self.panel.fill([])
            return
        self._generation += 1
        generation = self._generation
        in_background(
            self._read,
            book_id,
            then=lambda found: self._show(generation, found),
            failed=lambda exc: self._failed(generation, exc),
        )

    def _read(self, book_id: int) -> tuple[list[ConversationInfo], list[AnchoredMark]]:
        return self.app.conversations.threads(book_id), anchored_marks(self.app.library.db, book_id)

    def _failed(self, generation: int, exc: Exception) -> None:
        if not isinstance(exc, MarginError):
            raise exc
        self._show(generation, ([], []))

    def _show(
        self, generation: int, found: tuple[list[ConversationInfo], list[AnchoredMark]]
    ) -> None:
        if generation != self._generation or not shiboken6.isValid(self.panel):
            return
        threads, marks = found
        self._threads = {t.id: t for t in threads}
        self.panel.fill(threads)
        if self.marks is not None and shiboken6.isValid(self.marks):
            self.marks.set_marks(
                [MarginMark(a.kind, a.key, a.page, a.start, a.exact) for a in marks]
            )
        self.changed.emit()

    def open_thread(self, conversation_id: int) -> None:
        """The thread in the chat pane, the book at its passage with the words marked."""
        chat = self.window.chat
        if hasattr(chat, "select_conversation"):
            if not self.window.panes.chat_visible():
                self.window.panes.set_chat_visible(True)
            chat.select_conversation(conversation_id)
        thread = self._threads.get(conversation_id)
        if thread is not None and thread.quote is not None:
            q = thread.quote
            self.reader.go_to_page(q.page, mark=q.exact, near=q.start)
            mark_exactly(self.views, q.page, q.start, q.exact)

    def open_note(self, mark: MarginMark) -> None:
        self.reader.go_to_page(mark.page, mark=mark.exact, near=mark.start)
        mark_exactly(self.views, mark.page, mark.start, mark.exact)
        if mark.key > 0:  # a highlight's note: the Highlights tab
            self.reader.side.setCurrentWidget(self.reader.side.highlights)
        else:
            self.window.panels.open_notes()


def show_lost(parent: QWidget, title: str, lost: list[LostAnchor]) -> None:
    """After a re-read: what no longer matches the book's text, listed for the reader (it
    stays at its old page, never moved by guess)."""
    if not lost:
        return
    names = {"citation": "answer's source"}
    lines = []
    for a in lost[:12]:
        words = " ".join(a.text.split())
        short = words if len(words) <= 70 else words[:69] + "…"
        lines.append(f"• p. {a.page}, {names.get(a.kind, a.kind)}: “{short}”")
    if len(lost) > 12:
        lines.append(f"… and {len(lost) - 12} more ('margin lost' lists them all).")
    QMessageBox.information(
        parent,
        "Some passages were not found",
        f"“{title}” was read again, and {len(lost)} of your highlights, notes, threads or "
        "answers' sources no longer match its text. They stay at their old pages:\n\n"
        + "\n".join(lines),
    )


def install_threads(window: MainWindow) -> Threads:
    """The one place threads are wired into the window."""
    threads = Threads(window)
    events = window.reader.events
    events.subscribe(BookOpened, lambda e: threads.book_opened(e.book_id))
    events.subscribe(BookClosed, lambda e: None if e.reopening else threads.book_opened(None))
    events.subscribe(HighlightsChanged, threads.refresh)
    events.subscribe(ConversationChanged, threads.refresh)  # a thread started or was deleted
    side = window.reader.side
    side.currentChanged.connect(  # message counts are fresh when the tab is looked at
        lambda _i: threads.refresh() if side.currentWidget() is threads.panel else None
    )
    return threads
