"""One typed event stream for the reading view: what happened to the open book.

The reader is the host: it owns one ``Events`` (``reader.events``) and publishes what happens
to the book; every module that reacts to the book (contents, find, highlights, the footer,
the companion tabs, cards, threads, notes) subscribes to the events it needs, in its
constructor or its one registration line, and never calls another module. Handlers run at
once, in the order they subscribed, on the window's thread (a plain list, no Qt queue: what a
module shows is up to date when ``publish`` returns). A handler that needs slow work starts it
on a worker itself (``desktop.tasks.in_background``).

The events, in the order a book goes through them::

    BookOpening(book, labels)   the book is loaded, its first page not yet shown: fill lists
    PageShown(book_id, page)    the page on screen changed (every turn, scroll or jump)
    ReadToChanged(book_id, …)   how far the reader has read changed (the spoiler bound)
    BookOpened(book_id)         the book shows at its page (companions look at it now)
    SelectionChanged(book_id, …) the reader selected text on the page, or the selection went
    HighlightsChanged(book_id)  a highlight, its note, colour or style was added or changed
    ConversationChanged(book_id) a thread about a passage started or went on, or was deleted
    BookClosed(book_id, …)      the book is closed (``reopening``: another book, or the same
                                one read anew, opens at once; else it was removed)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.store.library import BookInfo
    from desktop.reader.pages import PageLabels


@dataclass(frozen=True, slots=True)
class BookOpening:
    """The book is loaded (its view, page labels and session exist); its page shows next."""

    book: BookInfo
    labels: PageLabels


@dataclass(frozen=True, slots=True)
class BookOpened:
    """The book shows at its page."""

    book_id: int


@dataclass(frozen=True, slots=True)
class BookClosed:
    """The book is closed; ``reopening``: a book (maybe the same, read anew) opens at once."""

    book_id: int
    reopening: bool = False


@dataclass(frozen=True, slots=True)
class PageShown:
    """The page on screen is ``page`` (``reading``: the reader read on to it)."""

    book_id: int
    page: int
    reading: bool = False


@dataclass(frozen=True, slots=True)
class ReadToChanged:
    """How far the reader has read: ``read_to`` (a page), or the whole book when finished."""

    book_id: int
    read_to: int
    finished: bool = False


@dataclass(frozen=True, slots=True)
class HighlightsChanged:
    book_id: int


@dataclass(frozen=True, slots=True)
class SelectionChanged:
    """The reader's selection on the page: ``text`` selected on ``page`` ("" when it went)."""

    book_id: int
    page: int
    text: str


@dataclass(frozen=True, slots=True)
class ConversationChanged:
    """A conversation about the book changed: a thread about a passage started, went on or
    was deleted (its mark in the margin comes or goes)."""

    book_id: int


type Event = (
    BookOpening
    | BookOpened
    | BookClosed
    | PageShown
    | ReadToChanged
    | SelectionChanged
    | HighlightsChanged
    | ConversationChanged
)


class Events:
    """The stream: ``subscribe(PageShown, handler)``, ``publish(PageShown(book, page))``."""

    def __init__(self) -> None:
        self._handlers: dict[type, list[Callable[[object], object]]] = {}

    def subscribe[E](self, kind: type[E], handler: Callable[[E], object]) -> None:
        self._handlers.setdefault(kind, []).append(handler)  # type: ignore[arg-type]

    def unsubscribe[E](self, kind: type[E], handler: Callable[[E], object]) -> None:
        handlers = self._handlers.get(kind, [])
        if handler in handlers:
            handlers.remove(handler)

    def publish(self, event: Event) -> None:
        for handler in list(self._handlers.get(type(event), ())):
            handler(event)
