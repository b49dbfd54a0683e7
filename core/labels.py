"""How pages and quotes are written for people and models: one place for each form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Labels = Sequence[str] | Mapping[int, str]  # printed label by page: in order, or by number

QUOTE_OPEN = "«"  # marks the matched words in a search snippet
QUOTE_CLOSE = "»"


def pages_label(first: int, last: int) -> str:
    """ "p. 3" or "pp. 3–5"."""
    return f"p. {first}" if first == last else f"pp. {first}–{last}"


def printed_pages(first: int, last: int, labels: Labels) -> str:
    """ "p. 40 in print" or "pp. 40–42 in print": the paper book's page numbers of Margin's
    pages ``first``–``last`` (``labels``: the book's printed label of each page, in order, as
    ``Library.page_labels`` gives them, or by page number; from an EPUB's page-list or a PDF's page labels);
    "" when these pages carry no printed number of their own (the label is the page's
    number, or the book has none)."""

    def label(page: int) -> str:
        if isinstance(labels, Mapping):
            found = labels.get(page, "")
        else:
            found = labels[page - 1] if 0 < page <= len(labels) else ""
        return " ".join(found.split()) or str(page)

    start, end = label(first), label(last)
    if start == str(first) and end == str(last):
        return ""
    return f"p. {start} in print" if start == end else f"pp. {start}–{end} in print"


def cited_pages(first: int, last: int, labels: Labels) -> str:
    """ "p. 7 (p. 40 in print)", or "p. 7" for pages without a printed number: how a
    citation names its pages in exports and in what the assistant reads."""
    printed = printed_pages(first, last, labels)
    return pages_label(first, last) + (f" ({printed})" if printed else "")


_INVISIBLE_CONTROLS = dict.fromkeys(
    [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


def display_title(title: str) -> str:
    """A book's title for a window title or a one-line label: one line, without control
    characters or the direction overrides (U+202E) that would flip the text after it. A
    title isolated right-to-left as a whole (``dir="rtl"`` in its EPUB) keeps its isolate:
    it closes itself, so nothing after it flips."""
    if len(title) > 2 and title[0] == "\u2067" and title[-1] == "\u2069":
        inner = display_title(title[1:-1])
        return f"\u2067{inner}\u2069" if inner != "Untitled" else inner
    return " ".join(title.translate(_INVISIBLE_CONTROLS).split()) or "Untitled"
