"""The Find side panel: find in the whole book (whole words, exact phrase), the matches listed
in book order with a count, and Enter / Shift+Enter in the box (or F3 / Shift+F3 anywhere in
the reader) through all of them. Matches after where the reader has read are folded behind
"N more after where you have read" (issue 46 item 4), opened only by a click on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.search.find import BookText, FindMatch
from desktop.accessibility import StatusLabel
from desktop.events import BookOpening, Events
from desktop.reader.pages import MATCH_ROLE, PAGE_ROLE, PageLabels
from desktop.widgets import tool_button


class OpenBook(Protocol):
    """What Find needs of the reader: the page on screen, the book's page texts and the last
    page read."""

    @property
    def page(self) -> int: ...

    def page_texts(self) -> list[tuple[int, str]]: ...

    def read_bound(self) -> int | None: ...


MAX_LISTED = 500  # results listed; F3 goes through all of them
LATER_ROLE = Qt.ItemDataRole.UserRole + 40  # the folded "N more after where you have read"


class FindPanel(QWidget):
    requestMatch = Signal(int, str, int)  # page, the matched text, its offset in the page
    requestShown = Signal()  # results are listed: show this panel
    requestFocusBook = Signal()

    def __init__(self, events: Events, book: OpenBook) -> None:
        super().__init__()
        events.subscribe(
            BookOpening,
            lambda e: self.set_book(book.page_texts, e.labels, lambda: book.page, book.read_bound),
        )
        self.box = QLineEdit(placeholderText="Find in book…")
        self.box.setAccessibleName("Find in book")
        self.box.setClearButtonEnabled(True)
        # Enter finds and goes to the first match from the page on screen, then the next
        # one at each press; Shift+Enter goes back (as F3 / Shift+F3, without leaving the box)
        self.box.installEventFilter(self)
        self.whole_word_box = QCheckBox("Whole words")
        self.exact_box = QCheckBox("Exact phrase")
        self.exact_box.setToolTip("Match case and punctuation exactly as typed")
        self.count = StatusLabel("")  # said as it changes; its name is its text
        self.prev_button = tool_button("▲")
        self.prev_button.setToolTip("Previous match (Shift+F3)")
        self.prev_button.setAccessibleName("Previous match")
        self.next_button = tool_button("▼")
        self.next_button.setToolTip("Next match (F3)")
        self.next_button.setAccessibleName("Next match")
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.results = QListWidget()
        self.results.setAccessibleName("Find results")
        self.results.setWordWrap(True)
        self.results.itemActivated.connect(self.go_item)
        self.results.itemClicked.connect(self.go_item)
        self.results.itemClicked.connect(lambda *_: self.requestFocusBook.emit())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.box)
        # one option a line: the panel stays narrow beside the book (side_panels.SIDE_MIN)
        layout.addWidget(self.whole_word_box)
        layout.addWidget(self.exact_box)
        counts = QHBoxLayout()
        counts.addWidget(self.count, 1)
        counts.addWidget(self.prev_button)
        counts.addWidget(self.next_button)
        layout.addLayout(counts)
        layout.addWidget(self.results)
        self.matches: list[FindMatch] = []
        self.index = -1
        self._book_text: BookText | None = None
        self._texts: Callable[[], list[tuple[int, str]]] | None = None
        self._labels = PageLabels()
        self._page: Callable[[], int] = lambda: 1
        self._bound: Callable[[], int | None] = lambda: None
        self._unfolded = False  # the matches after the bound are shown (asked for)
        self._searched: tuple[str, bool, bool] | None = None  # what the matches are for

    def _query(self) -> tuple[str, bool, bool]:
        return (
            self.box.text().strip(),
            self.whole_word_box.isChecked(),
            self.exact_box.isChecked(),
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.box
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            back = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.enter(-1 if back else 1)
            return True
        return super().eventFilter(watched, event)

    def enter(self, step: int = 1) -> None:
        """Enter in the box: find (when the words or options changed) and go to a match."""
        if self._searched != self._query():
            self.run()
        self.step(step)

    def set_book(
        self,
        texts: Callable[[], list[tuple[int, str]]] | None,
        labels: PageLabels,
        page: Callable[[], int],
        bound: Callable[[], int | None] = lambda: None,
    ) -> None:
        """The open book: ``texts`` reads its pages (once, when first needed), ``page`` is the
        page on screen (F3 starts there), ``bound`` the last page read (None: all read)."""
        self._texts, self._labels, self._page, self._bound = texts, labels, page, bound
        self._book_text = None
        self.reset()

    def reset(self) -> None:
        self.results.clear()
        self.count.setText("")
        self.matches = []
        self.index = -1
        self._searched = None

    def run(self, *, unfold: bool = False) -> None:
        self.reset()
        self._unfolded = unfold
        query = self.box.text().strip()
        if self._texts is None or not query:
            return
        self._searched = self._query()
        if self._book_text is None:
            self._book_text = BookText(self._texts())
        try:
            self.matches = self._book_text.find(
                query,
                whole_word=self.whole_word_box.isChecked(),
                exact=self.exact_box.isChecked(),
                snippets=MAX_LISTED,
            )
        except MarginError as exc:
            self.count.setText(exc.message)
            return
        bound = self._bound()
        later = 0
        if bound is not None and not unfold:
            within = [m for m in self.matches if m.page <= bound]
            later, self.matches = len(self.matches) - len(within), within
        count = len(self.matches)
        if not count:
            where = " up to where you have read" if later else ""
            self.count.setText(f"Nothing matches “{query}”{where}.")
        else:
            self.count.setText("1 match" if count == 1 else f"{count} matches")
        for i, match in enumerate(self.matches[:MAX_LISTED]):
            label = self._labels.long(match.page)
            item = QListWidgetItem(f"{label} — …{match.before} {match.text} {match.after}…")
            item.setData(PAGE_ROLE, (match.page, match.text))
            item.setData(MATCH_ROLE, i)
            self.results.addItem(item)
        if later:
            item = QListWidgetItem(f"{later} more after where you have read (p. {bound}) — show")
            item.setData(LATER_ROLE, True)
            item.setToolTip("Matches after the last page you have read: they may spoil the story")
            self.results.addItem(item)
        self.requestShown.emit()

    def step(self, step: int = 1) -> None:
        """F3 / Shift+F3: the next or previous match after the page on screen."""
        if not self.matches:
            if self.box.text().strip() and self._texts is not None:
                self.run()
            if not self.matches:
                return
        if self.index < 0:
            here = self._page()
            if step > 0:
                later = [i for i, m in enumerate(self.matches) if m.page >= here]
                index = later[0] if later else 0
            else:
                earlier = [i for i, m in enumerate(self.matches) if m.page <= here]
                index = earlier[-1] if earlier else len(self.matches) - 1
        else:
            index = (self.index + step) % len(self.matches)
        self.go_match(index)

    def go_match(self, index: int) -> None:
        self.index = index
        match = self.matches[index]
        if index < self.results.count():
            self.results.blockSignals(True)
            self.results.setCurrentRow(index)
            self.results.blockSignals(False)
        self.count.setText(f"{index + 1} of {len(self.matches)} matches")
        self.requestMatch.emit(match.page, match.text, match.offset + 1)

    def go_item(self, item: QListWidgetItem) -> None:
        if item.data(LATER_ROLE):  # asked for: the later matches too, once this click is over
            # (the list is cleared and refilled: doing it inside the item's own click signal
            # deleted the item under Qt's other slots, and the window crashed)
            QTimer.singleShot(0, lambda: self.run(unfold=True))
            return
        index = item.data(MATCH_ROLE)
        if isinstance(index, int) and 0 <= index < len(self.matches):
            self.go_match(index)
