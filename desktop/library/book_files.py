"""Which files are books, for the window: the suffixes it takes from the command line and by
drag and drop, and the file dialog's filter. Plain data (no Qt, no parsers): the start-up path
reads it before anything else is imported."""

from __future__ import annotations

# the suffixes of ``core.books.parse.SUFFIXES`` (a test keeps them equal): importing the
# parsers only to read this list cost ~40 ms of every start
BOOK_SUFFIXES = frozenset(
    (".epub", ".pdf", ".txt", ".text", ".md", ".markdown", ".html", ".htm", ".xhtml", ".cbz")
)
BOOK_FILTER = (
    "Books (*.epub *.pdf *.cbz *.txt *.text *.md *.markdown *.html *.htm *.xhtml);;All files (*)"
)
