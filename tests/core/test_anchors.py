"""core/store/anchors.py: quotes made from stored offsets, the map between collapsed text and
stored offsets, finding a quote again (word for word, by context, fuzzy, or not at all)."""

from __future__ import annotations

from core.store.anchors import (
    BookText,
    TextQuote,
    collapse,
    moved,
    stored_to_view,
    view_to_stored,
)

PAGES = [
    (1, "  A first page.\n\nIts second   paragraph\nruns over a line.  "),
    (2, "The cat sat on the mat.\n\nThe cat sat on the mat again, said the cat."),
    (3, "\n\nLast words of the book."),
]


def test_stored_offsets_and_collapsed_text_map_both_ways() -> None:
    book = BookText(PAGES)
    assert "paragraph runs over" in book.text and "  " not in book.text
    for page, text in PAGES:
        for offset, char in enumerate(text):
            if char.isspace():
                continue
            at = book.position(page, offset)
            assert book.text[at] == char
            assert book.locate(at) == (page, offset)


def test_a_quote_keeps_its_words_context_and_offsets() -> None:
    book = BookText(PAGES)
    text = PAGES[0][1]
    start = text.index("second")
    quote = book.quote(1, start, 1, text.index("line") + 4)
    assert quote.exact == "second paragraph runs over a line"
    assert quote.prefix.endswith("first page. Its ") and quote.suffix.startswith(". The cat")
    assert (quote.page, quote.start, quote.end_page) == (1, start, 1)
    assert collapse(text[quote.start : quote.end]) == quote.exact
    assert TextQuote.from_json(quote.to_json()) == quote
    assert quote.selector() == {
        "type": "TextQuoteSelector",
        "exact": quote.exact,
        "prefix": quote.prefix,
        "suffix": quote.suffix,
    }
    assert TextQuote.from_json({"page": 3}) is None and TextQuote.from_json("x") is None


def test_found_again_by_context_then_fuzzily_and_never_by_guess() -> None:
    book = BookText(PAGES)
    second = book.quote_of("The cat sat on the mat", 2, near=25)
    assert second is not None and second.start == PAGES[1][1].index("The cat sat", 5)
    reread = BookText(
        [
            (1, "A first page. Its second paragraph runs over a line. The cat sat on the mat."),
            (2, "The cat sat on the mat again, said the cat. Last words of the book."),
        ]
    )
    found = moved(book, reread, second)
    assert found is not None and not found.fuzzy
    assert (found.quote.page, found.quote.start) == (2, 0), "the one followed by ' again'"
    changed = TextQuote("The cat sat on the mats again, said teh cat", page=2, start=25)
    fuzzy = reread.find(changed)
    assert fuzzy is not None and fuzzy.fuzzy
    assert fuzzy.quote.exact.startswith("The cat sat on the mat again")
    assert reread.find(TextQuote("A dog barked at the postman twice", page=2)) is None
    assert reread.find(TextQuote("cta", page=1)) is None, "short words are found only as they are"


def test_a_long_passage_that_changed_a_little_is_found_by_its_ends() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    book = BookText([(1, "Before. " + words + " After.")])
    quote = TextQuote(words.replace("word100", "wrod100"), page=1, start=8)
    found = book.find(quote)
    assert found is not None and found.fuzzy and found.quote.exact == words


def test_view_offsets_count_one_paragraph_break_for_a_blank_line() -> None:
    text = PAGES[1][1]
    start = text.index("again")
    view = stored_to_view(text, start)
    assert view == start - 1
    assert view_to_stored(text, view) == start
