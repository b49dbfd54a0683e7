"""The marks' functions use only the narrow view they are given (mark_views.BookViews):
no reader, no host internals. A stand-in with the same calls is enough."""

from __future__ import annotations

from core.books.model import PageContent
from desktop.highlights.margin_marks import mark_exactly, stored_offset
from desktop.highlights.mark_views import MarkedPdfView, MarkedTextView, PageTexts


class _Pages:
    def stored_text(self, page: int) -> str:
        return "First line.\n\nSecond paragraph here."

    def __call__(self, number: int) -> PageContent:
        raise AssertionError("not read")


class _Views:
    def __init__(self, pages: PageTexts | None) -> None:
        self._pages = pages

    @property
    def pages(self) -> PageTexts | None:
        return self._pages

    def text_view(self) -> MarkedTextView | None:
        return None

    def pdf_view(self) -> MarkedPdfView | None:
        return None


def test_stored_offset_reads_only_the_given_pages() -> None:
    views = _Views(_Pages())
    # the text view lays out one break where the stored text has a blank line
    anchor = {"start": {"page": 3, "offset": 12}}
    assert stored_offset(views, 3, anchor) == 13
    assert stored_offset(views, 4, anchor) == -1, "another page's anchor"
    assert stored_offset(views, 3, "not an anchor") == -1
    assert stored_offset(_Views(None), 3, anchor) == -1, "no book open"
    assert stored_offset(views, 3, {"polys": [[0, 0, 1, 1]]}) == -1, "no PDF view"
    assert not mark_exactly(views, 3, 0, "First"), "no text view: nothing to mark"
