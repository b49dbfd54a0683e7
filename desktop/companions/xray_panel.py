"""The X-Ray tab: who and what the reader has met so far, each with its description and the
pages it is on (click one: the book opens there and marks the name)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.companions import xray
from core.store.library import Library
from desktop.companions.panel import CompanionFeed, page_link, tab_layout

KEY_ROLE = Qt.ItemDataRole.UserRole + 20
KINDS = {"person": "person", "place": "place", "thing": "thing", "other": "name"}
MENTIONS_SHOWN = 200


class XRayPanel(QWidget):
    title = "X-Ray"

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.feed: CompanionFeed[xray.XRay] = CompanionFeed(
            self,
            self.title,
            self.load,
            self.show_result,
            self.clear,
            refreshing=self._refreshing,
            repaint=self.repaint_content,
        )
        self.layout_ = tab_layout(self)
        self.made: xray.XRay | None = None
        self._wanted = ""  # a name asked for ("Who is this?") before the X-Ray was ready
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter names")
        self.filter.setAccessibleName("Filter X-Ray names")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.list = QListWidget()
        self.list.setAccessibleName("People, places and things met so far")
        self.list.currentItemChanged.connect(lambda item, _old: self._show_entry(item))
        # the entry is one Tab stop (read as a text: name, description, …); its pages, one
        # link each on screen, are one more: a button whose menu lists them
        self.detail = self.feed.browser("X-Ray entry", keyboard_links=False)
        self.pages = QPushButton("Pages…")
        self.pages.setMenu(QMenu(self.pages))
        self.pages.menu().triggered.connect(self._page_chosen)
        self.pages.setEnabled(False)
        below = QWidget()
        column = QVBoxLayout(below)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.detail, 1)
        column.addWidget(self.pages)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(below)
        split.setSizes([220, 320])
        self.layout_.addWidget(self.filter)
        self.layout_.addWidget(self.feed.status)
        self.layout_.addWidget(split, 1)
        self.feed.add_job(self.layout_, "Model notes…", recap=False, notes=True)
        if self.feed.job is not None:  # a short label fits a narrow panel
            self.feed.job.setToolTip(
                "Notes on the people and things met so far, written by the model"
            )

    def load(self, book_id: int) -> xray.XRay:
        db = self.library.db
        return xray.stored(db, book_id) or xray.build(db, book_id)

    def clear(self) -> None:
        self.feed.status.setText("")
        self.made = None
        self.list.clear()
        self.detail.clear()

    def _refreshing(self) -> None:
        if self.made is None and self.feed.book_id is not None:
            self.feed.status.setText("Reading the pages you have read for names…")

    def show_result(self, result: xray.XRay) -> None:
        made: xray.XRay = result
        current = self.list.currentItem()
        keep = current.data(KEY_ROLE) if current is not None else None
        self.made = made
        self.feed.bound = made.read_to
        self.list.clear()
        if not made.entries:
            self.feed.status.setText(
                f"Nobody named yet in pages 1–{made.read_to}. People, places and things "
                "appear here as you meet them."
            )
            self.detail.clear()
            return
        self.feed.status.setText(
            f"{len(made.entries)} names in pages 1–{made.read_to} (nothing after)."
        )
        for entry in made.entries:
            kind = f" · {entry.kind}" if entry.kind in ("place", "thing") else ""
            item = QListWidgetItem(f"{entry.name} — {entry.uses}{kind}")
            item.setData(Qt.ItemDataRole.AccessibleTextRole, spoken_item(entry))
            item.setData(KEY_ROLE, entry.key)
            item.setToolTip(f"{KINDS.get(entry.kind, 'name')}, first on p. {entry.first_page}")
            self.list.addItem(item)
            if entry.key == keep:
                self.list.setCurrentItem(item)
        self._filter(self.filter.text())
        if self._wanted:
            wanted, self._wanted = self._wanted, ""
            self.who_is(wanted)
        elif self.list.currentItem() is None:
            self.list.setCurrentRow(0)

    def repaint_content(self) -> None:
        self._show_entry(self.list.currentItem())

    def _filter(self, text: str) -> None:
        needle = text.strip().casefold()
        for i in range(self.list.count()):
            item = self.list.item(i)
            entry = self._entry(item.data(KEY_ROLE))
            names = " ".join(entry.names()).casefold() if entry else ""
            item.setHidden(bool(needle) and needle not in names)

    def _entry(self, key: str) -> xray.Entry | None:
        if self.made is None:
            return None
        return next((e for e in self.made.entries if e.key == key), None)

    def who_is(self, text: str) -> bool:
        """Show the entry of a selected name; False (and says so) when there is none."""
        if self.made is None:
            self._wanted = text
            self.feed.refresh()
            return False
        entry = self.made.find(text)
        if entry is None:
            self.feed.status.setText(
                f"“{text.strip()[:60]}” is not a name met in pages 1–{self.made.read_to}."
            )
            return False
        self.filter.clear()
        for i in range(self.list.count()):
            if self.list.item(i).data(KEY_ROLE) == entry.key:
                self.list.setCurrentRow(i)
                break
        return True

    def _show_entry(self, item: QListWidgetItem | None) -> None:
        entry = self._entry(item.data(KEY_ROLE)) if item is not None else None
        menu = self.pages.menu()
        menu.clear()
        if entry is None:
            self.detail.clear()
            self.detail.setAccessibleName("X-Ray entry")
            self.pages.setText("Pages…")
            self.pages.setEnabled(False)
            return
        self.detail.setHtml(entry_html(entry))
        self.detail.setAccessibleName(spoken_entry(entry))
        self.detail.setAccessibleDescription("X-Ray entry")
        shown = entry.mentions[:MENTIONS_SHOWN]
        for page, n, form in shown:
            action = QAction(f"p. {page}" + (f" ({n} times)" if n > 1 else ""), menu)
            action.setData((page, form))
            menu.addAction(action)
        self.pages.setText(f"Pages ({len(entry.mentions)})…")
        self.pages.setAccessibleName(f"{len(entry.mentions)} pages with {entry.name}")
        self.pages.setEnabled(bool(shown))

    def _page_chosen(self, action: QAction) -> None:
        page, form = action.data()
        self.feed.requestPlace.emit(int(page), str(form))
        self.feed.requestFocusBook.emit()


def spoken_item(entry: xray.Entry) -> str:
    """A row of the list as a screen reader says it: "Rabbit, person, 12 mentions"."""
    return f"{entry.name}, {KINDS.get(entry.kind, 'name')}, {entry.uses} mentions"


def spoken_entry(entry: xray.Entry) -> str:
    """An entry as a screen reader says it when it is reached: its name, what it is, where
    it is first met and its description (the pages are the Pages button's)."""
    words = [f"{entry.name}: {KINDS.get(entry.kind, 'name')}, {entry.uses} mentions, "]
    words.append(f"first on p. {entry.first_page}.")
    if entry.aliases:
        words.append(f" Also: {', '.join(entry.aliases)}.")
    if entry.note:
        words.append(f" {entry.note}")
    words.extend(f" “{sentence}” (p. {page})" for page, sentence in entry.description)
    return "".join(words)


def entry_html(entry: xray.Entry) -> str:
    """An entry as the tab shows it: name, other names, description, every page."""
    parts = [f"<h3>{html.escape(entry.name)}</h3>"]
    also = f" Also: {html.escape(', '.join(entry.aliases))}." if entry.aliases else ""
    first_form = entry.mentions[0][2]
    parts.append(
        f"<p><i>{KINDS.get(entry.kind, 'name').capitalize()}</i> — {entry.uses} mentions, "
        f"first on {page_link(entry.first_page, first_form)}.{also}</p>"
    )
    if entry.note:
        parts.append(f"<p>{html.escape(entry.note)}</p>")
    for page, sentence in entry.description:
        parts.append(f"<p>“{html.escape(sentence)}” ({page_link(page, sentence[:80])})</p>")
    links = [
        page_link(page, form, f"{page}" + (f" ×{n}" if n > 1 else ""))
        for page, n, form in entry.mentions[:MENTIONS_SHOWN]
    ]
    more = len(entry.mentions) - MENTIONS_SHOWN
    tail = f" … and {more} more pages" if more > 0 else ""
    parts.append(f"<p><b>Pages:</b> {', '.join(links)}{tail}</p>")
    return "".join(parts)
