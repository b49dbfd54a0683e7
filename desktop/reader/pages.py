"""Small shared pieces of the reader's panels: item roles and how a page is named."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt

PAGE_ROLE = Qt.ItemDataRole.UserRole + 2  # (page, text) or page of a list item
MATCH_ROLE = Qt.ItemDataRole.UserRole + 3  # index of a Find match
ANCHOR_ROLE = Qt.ItemDataRole.UserRole + 4  # (page, offset) where a highlight starts


class PageLabels:
    """A book's printed page labels ("iv", "12"), by stored page number."""

    def __init__(self, labels: Sequence[str] = ()) -> None:
        self.labels = list(labels)

    def printed(self, page: int) -> str:
        """The printed label of ``page``, or "" when the book has none for it."""
        return self.labels[page - 1] if 0 < page <= len(self.labels) else ""

    def short(self, page: int) -> str:
        return self.printed(page) or str(page)

    def find(self, text: str, page_count: int) -> int | None:
        """The page a reader typed: "40" is Margin's page 40; "p. 40", "p40" or a label no
        number can be ("xii") is the page where that printed page starts."""
        text = " ".join(text.split()).lower()
        printed = text.removeprefix("p.").removeprefix("p").strip() if text[:1] == "p" else ""
        if text.isdigit() and not printed:
            number = int(text)
            return number if 1 <= number <= page_count else None
        wanted = printed or text
        for number, label in enumerate(self.labels, 1):
            if label.lower() == wanted:
                return number
        return None

    def long(self, page: int) -> str:
        """ "p. 12", or "p. 14 (xii)" when the printed number differs."""
        label = self.short(page)
        return f"p. {page}" if label == str(page) else f"p. {page} ({label})"


class Chapters:
    """Which chapter each stored page belongs to (Home/End, time left in the chapter)."""

    def __init__(self, chapter_of_page: Sequence[int] = ()) -> None:
        self.of_page = list(chapter_of_page)

    def pages_with(self, page: int) -> list[int]:
        """The stored pages of ``page``'s chapter, in order ([] when unknown)."""
        if not 0 < page <= len(self.of_page):
            return []
        chapter = self.of_page[page - 1]
        return [i + 1 for i, c in enumerate(self.of_page) if c == chapter]

    def left_from(self, page: int) -> int:
        """Pages left in ``page``'s chapter, ``page`` included (0 when unknown)."""
        return sum(1 for p in self.pages_with(page) if p >= page)
