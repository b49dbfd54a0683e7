"""The side panel (side_panels.py) and its slot for companion panels: added by name, following
the reader's events (a book opened, a page shown), replaced without a second tab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel

from core.books.importer import import_book
from core.store.library import Library
from desktop.events import BookOpened, Events, PageShown
from desktop.reader.pages import Chapters, PageLabels
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import press, text_view


class Companion(QLabel):
    """A companion built as every module is: given the events it follows."""

    def __init__(self, events: Events) -> None:
        super().__init__("X-Ray")
        self.seen: list[tuple[str, int, int]] = []
        events.subscribe(BookOpened, lambda e: self.book_opened(e.book_id))
        events.subscribe(PageShown, lambda e: self.page_shown(e.book_id, e.page))

    def book_opened(self, book_id: int) -> None:
        self.seen.append(("opened", book_id, 0))

    def page_shown(self, book_id: int, page: int) -> None:
        self.seen.append(("page", book_id, page))


def test_a_companion_panel_follows_the_book_and_the_page(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    from PySide6.QtCore import Qt

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    xray = Companion(reader.events)
    reader.side.add_panel("X-Ray", xray)
    reader.side.add_panel("X-Ray", xray)  # again: still one tab
    names = [reader.side.tabText(i) for i in range(reader.side.count())]
    assert names == ["Contents", "Find", "Highlights", "X-Ray"]
    reader.open_book(book, 10)
    assert ("opened", book.id, 0) in xray.seen and ("page", book.id, 10) in xray.seen
    while reader.page < 11:
        press(text_view(reader), Qt.Key.Key_PageDown)
    assert xray.seen[-1] == ("page", book.id, 11)
    assert reader.side.show_panel("X-Ray") and reader.side.current_name() == "X-Ray"
    assert reader.side.panel("X-Ray") is xray and not reader.side.show_panel("Nothing")


def test_page_labels_and_chapters(qapp: Any) -> None:
    labels = PageLabels(["i", "ii", "1", "2"])
    assert (labels.short(1), labels.long(1), labels.long(3), labels.long(9)) == (
        "i",
        "p. 1 (i)",
        "p. 3 (1)",
        "p. 9",
    )
    chapters = Chapters([0, 0, 1, 1, 1, 2])
    assert chapters.pages_with(4) == [3, 4, 5] and chapters.left_from(4) == 2
    assert chapters.pages_with(99) == [] and chapters.left_from(0) == 0
