"""How page and chunk text is stored (schema 8): what goes in comes back exactly."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.books.chunking import make_chunks
from core.books.parse import parse_book
from core.store.models import (
    chunk_pages,
    pack_chunk,
    pack_page,
    page_text,
    plain_html,
    unpack_chunk,
    unpack_page,
)

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3000)


@given(TEXT, st.one_of(st.none(), TEXT))
@settings(max_examples=150, deadline=None)
def test_a_page_comes_back_exactly(text: str, html: str | None) -> None:
    back_text, back_html = unpack_page(pack_page(text, html))
    assert back_text == text == page_text(pack_page(text, html))
    if html is None:
        assert back_html is None
    elif html in ("", plain_html(text)):
        assert back_html == plain_html(text)  # stored as "just the paragraphs"
    else:
        assert back_html == html


@given(TEXT, TEXT, TEXT)
@settings(max_examples=150, deadline=None)
def test_a_chunk_comes_back_with_any_pages(text: str, first: str, last: str) -> None:
    """Any text packs against any pages (they only help compression)."""
    packed = pack_chunk(text, chunk_pages(first, last))
    assert unpack_chunk(packed, pack_page(first, None), pack_page(last, "<p>x</p>")) == text


def test_pages_longer_than_zlibs_window_and_a_chunk_over_three_pages() -> None:
    big = "word " * 20_000  # 100 kB: only its last 32 KiB can serve as the dictionary
    text = "start " + big[:5000] + " end"
    packed = pack_chunk(text, chunk_pages(big, "second page"))
    assert unpack_chunk(packed, pack_page(big, None), pack_page("second page", None)) == text


def test_unpacking_against_the_wrong_pages_fails_loudly() -> None:
    first, last = "It was a dark and stormy night. " * 20, "The end."
    text = first[40:400] + last
    packed = pack_chunk(text, chunk_pages(first, last))
    with pytest.raises((zlib.error, ValueError)):
        unpack_chunk(packed, pack_page("other text entirely " * 5, None), pack_page(last, None))
    with pytest.raises(ValueError, match="not a stored chunk"):
        unpack_chunk(b"xyz", None, None)
    with pytest.raises(ValueError, match="not a stored page"):
        unpack_page(b"xyz")


def test_rows_from_before_schema_8_read_as_they_are() -> None:
    assert unpack_page("plain old text") == ("plain old text", None)
    assert page_text(None) == ""
    assert unpack_chunk("old chunk", None, None) == "old chunk"


def test_real_books_chunks_cost_little_beside_their_pages(books_dir: Path) -> None:
    parsed = parse_book(books_dir / "metamorphosis.epub")
    texts = {p.number: p.text for p in parsed.pages}
    chunks = make_chunks(parsed.pages)
    raw = sum(len(c.text.encode()) for c in chunks)
    packed = [
        pack_chunk(c.text, chunk_pages(texts[c.start_page], texts[c.end_page])) for c in chunks
    ]
    assert sum(len(b) for b in packed) < raw / 8  # plain zlib gets about 1 / 2
    for chunk, blob in zip(chunks, packed, strict=True):
        first = pack_page(texts[chunk.start_page], None)
        last = pack_page(texts[chunk.end_page], None)
        assert unpack_chunk(blob, first, last) == chunk.text
