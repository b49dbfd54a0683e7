"""Pages that are only pictures (scanned PDF pages, comics, image-only books): the window draws
them, but they hold no text for search or the assistant. What the chat says about them."""

from __future__ import annotations

import re

from core.store.library import Library

# a book's face: its cover or title page, named so by its contents entry or its picture's file
_FACE = re.compile(r"cover|title[ _-]?page|half[ _-]?title", re.IGNORECASE)
_IMG_SRC = re.compile(r'<img\b[^>]*?\bsrc="([^"]*)"', re.IGNORECASE)


def _is_face(library: Library, book_id: int, number: int, entries: dict[int, str]) -> bool:
    """A picture page that is the book's cover or title page (Standard Ebooks' title page is
    an SVG of lettering): the book's face, not a page of pictures whose words are lost."""
    if _FACE.search(entries.get(number, "")):
        return True
    sources = _IMG_SRC.findall(library.page(book_id, number).html or "")
    return bool(sources) and all(_FACE.search(src.rsplit("/", 1)[-1]) for src in sources)


def pages_without_text(library: Library, book_id: int) -> tuple[int, int]:
    """(pages without text, pages) of a book, neither counting its cover or title page when
    that is a picture: "1 of 425 pages are pictures" is not said of a novel's title page."""
    texts = library.page_texts(book_id)
    empty = [number for number, text in texts if not text.strip()]
    if not empty or len(empty) == len(texts):
        return len(empty), len(texts)  # a book of pictures: its cover is one of them
    entries: dict[int, str] = {}
    for item in library.toc(book_id):
        entries.setdefault(item.page, item.title)
    faces = sum(_is_face(library, book_id, number, entries) for number in empty[:3])
    return len(empty) - faces, len(texts) - faces


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
