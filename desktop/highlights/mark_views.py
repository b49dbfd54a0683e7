"""The narrow views the modules outside the reader need of its views, as Protocols.

``margin_marks``, ``reader.selection_actions``, the threads, the highlight bar and read
aloud are given these in their constructor (or as an argument) and use nothing else of the
reader (``Reader.views`` is the one door, typed ``ReaderViews``; no module reaches for the
reader's view host): the text view's position API, the PDF
view's page rectangles and text, and the view host that holds one of them. The real
classes (``TextView``, ``PdfView``, ``ViewHost``) match them by their shape; a test can
give anything that has the same calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from PySide6.QtCore import QRect, QRectF, SignalInstance
    from PySide6.QtGui import QTextCursor, QTextDocument
    from PySide6.QtPdf import QPdfDocument
    from PySide6.QtWidgets import QScrollBar, QWidget

    from core.books.model import PageContent
    from desktop.reader.pdf_view import PdfView
    from desktop.reader.text_view import TextView


class PageTexts(Protocol):
    """The open book's stored pages (``ViewHost.pages``: a ``PageSource``)."""

    def stored_text(self, page: int) -> str: ...

    def __call__(self, number: int) -> PageContent: ...


class FlowPlaces(Protocol):
    """The text view's flow (``view.flow``): the stored pages laid out (``loaded``), each
    from document position ``starts``."""

    @property
    def loaded(self) -> list[int]: ...

    @property
    def starts(self) -> list[int]: ...


class PagerColumns(Protocol):
    """The text view's pager (``view.pager``): paged or not, its columns on screen."""

    @property
    def paged(self) -> bool: ...

    def on_screen(self, position: int) -> bool: ...

    def column_count(self) -> int: ...

    def column_width(self) -> int: ...


class ViewMarks(Protocol):
    """The text view's marks (``view.marks``): a passage marked, the selection."""

    def mark_span(self, start: int, end: int) -> None: ...

    def selected_text(self) -> str: ...

    def selection_page(self) -> int: ...

    def selection_anchor(self) -> Mapping[str, object] | None: ...


class MarkedTextView(Protocol):
    """A reflowable view's position API: its flow's pages, its pager's columns, where a
    position shows (``cursorRect``, in the column holding it) and its marks."""

    @property
    def flow(self) -> FlowPlaces: ...

    @property
    def pager(self) -> PagerColumns: ...

    @property
    def marks(self) -> ViewMarks: ...

    def document(self) -> QTextDocument: ...

    def viewport(self) -> QWidget: ...

    def verticalScrollBar(self) -> QScrollBar: ...

    def cursorRect(self, cursor: QTextCursor | None = None) -> QRect: ...


class SelectedText(Protocol):
    """A reflowable view's selection (its words, page and anchor: ``marks``), and where
    the cursor shows."""

    @property
    def marks(self) -> ViewMarks: ...

    def viewport(self) -> QWidget: ...

    def cursorRect(self, cursor: QTextCursor | None = None) -> QRect: ...


class MarkedPdfView(Protocol):
    """A PDF view's pages: their rectangles on ``canvas`` at ``scale``, and their text."""

    @property
    def document(self) -> QPdfDocument: ...

    @property
    def canvas(self) -> QWidget: ...

    @property
    def rects(self) -> list[QRectF]: ...

    @property
    def scale(self) -> float: ...

    @property
    def zoomChanged(self) -> SignalInstance: ...

    def viewport(self) -> QWidget: ...

    def verticalScrollBar(self) -> QScrollBar: ...

    def horizontalScrollBar(self) -> QScrollBar: ...


class BookViews(Protocol):
    """The view host: the stored pages and whichever view shows the book."""

    @property
    def pages(self) -> PageTexts | None: ...

    def text_view(self) -> MarkedTextView | None: ...

    def pdf_view(self) -> MarkedPdfView | None: ...


class SelectionViews(Protocol):
    """What the selection's actions follow: the host's selection signals and views."""

    @property
    def pages(self) -> PageTexts | None: ...

    @property
    def textSelectionChanged(self) -> SignalInstance: ...

    @property
    def pdfSelected(self) -> SignalInstance: ...

    @property
    def selectionCleared(self) -> SignalInstance: ...

    @property
    def contextMenuAt(self) -> SignalInstance: ...

    def text_view(self) -> SelectedTextView | None: ...

    def pdf_view(self) -> MarkedPdfView | None: ...

    def clear_selection(self) -> None: ...


class SelectedTextView(MarkedTextView, SelectedText, Protocol):
    """The text view as the selection's actions see it (marks and selection)."""


class ShownViews(BookViews, Protocol):
    """The views and the one on screen now (the margin marks sit on it: threads)."""

    @property
    def view(self) -> QWidget | None: ...


class HighlightViews(BookViews, Protocol):
    """What the highlight bar follows: a highlight clicked, the page scrolled, the selection."""

    @property
    def highlightClicked(self) -> SignalInstance: ...

    @property
    def scrolledTo(self) -> SignalInstance: ...

    @property
    def textSelectionChanged(self) -> SignalInstance: ...

    @property
    def pdfSelected(self) -> SignalInstance: ...


class SpokenViews(Protocol):
    """What read aloud marks the spoken words in: the stored pages and the two views."""

    @property
    def pages(self) -> PageTexts | None: ...

    def text_view(self) -> TextView | None: ...

    def pdf_view(self) -> PdfView | None: ...


class ReaderViews(ShownViews, HighlightViews, SpokenViews, Protocol):
    """The reader's views as the modules outside it may use them (``Reader.views``)."""

    def text_view(self) -> TextView | None: ...

    def pdf_view(self) -> PdfView | None: ...
