"""Pages that are only pictures (scanned PDF pages, comics, image-only books): the window draws
them, but they hold no text for search or the assistant. What the chat says about them."""

from __future__ import annotations

from core.store.library import Library


def pages_without_text(library: Library, book_id: int) -> tuple[int, int]:
    """(pages without text, pages) of a book."""
    texts = library.page_texts(book_id)
    return sum(1 for _, text in texts if not text.strip()), len(texts)


def notice(without: int, total: int, book_format: str) -> str:
    """What the chat pane says about a book's pictures ("" when every page has text)."""
    if not without or not total:
        return ""
    if book_format in ("cbz", "comic") or (book_format == "epub" and without == total):
        return (
            "The assistant cannot read pictures: the pages of this book are images without "
            "text, so it cannot answer about what they show."
        )
    if without == total:
        return (
            "The assistant cannot read these pages: they are pictures without text (scanned "
            "pages), so search finds nothing on them and the assistant cannot answer about them."
        )
    return (
        f"{without} of {total} pages are pictures without text (scanned pages): the assistant "
        "cannot read those pages, and search finds nothing on them."
    )
