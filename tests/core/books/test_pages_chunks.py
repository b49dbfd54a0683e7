from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.books.chunking import make_chunks
from core.books.model import Block, Chapter
from core.books.pagecuts import split_long_text
from core.books.pages import paginate
from core.books.parse import parse_book

words = st.text(alphabet="abcdefghij .,!?", min_size=1, max_size=400).map(
    lambda s: s.strip() or "x"
)
chapters_strategy = st.lists(
    st.lists(words, min_size=0, max_size=30).map(
        lambda ps: Chapter("c", tuple(Block("p", p, p) for p in ps))
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(chapters_strategy, st.integers(min_value=200, max_value=3000))
def test_pagination_invariants(chapters: list[Chapter], target: int) -> None:
    pages, first = paginate(chapters, target=target)
    assert [p.number for p in pages] == list(range(1, len(pages) + 1))
    # all text, in order, nothing lost (long blocks are only cut at whitespace)
    original = " ".join(b.text for c in chapters for b in c.blocks).split()
    assert " ".join(p.text for p in pages).split() == original
    # chapters start new pages and pages never mix chapters
    for index, chapter in enumerate(chapters):
        if chapter.blocks:
            assert pages[first[index] - 1].chapter == index
            if first[index] > 1:
                assert pages[first[index] - 2].chapter != index
    for p in pages:
        assert len(p.text) <= max(target * 3 // 2 + 2, 2 * target)
    assert paginate(chapters, target=target) == (pages, first), "deterministic"


@settings(max_examples=150, deadline=None)
@given(chapters_strategy)
def test_chunk_invariants(chapters: list[Chapter]) -> None:
    pages, _ = paginate(chapters, target=800)
    chunks = make_chunks(pages, target=400, overlap=60)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    by_number = {p.number: p for p in pages}
    for c in chunks:
        assert 1 <= c.start_page <= c.end_page <= len(pages)
        assert by_number[c.start_page].chapter == c.chapter == by_number[c.end_page].chapter
        assert len(c.text) <= 400 * 2 + 60
    text_words = " ".join(p.text for p in pages).split()
    chunk_words = set(" ".join(c.text for c in chunks).split())
    assert set(text_words) <= chunk_words, "every word is searchable"


def test_split_long_text_prefers_sentences() -> None:
    text = "First sentence is here. " * 50 + "Tail"
    parts = split_long_text(text, 200)
    assert all(len(p) <= 200 for p in parts)
    assert all(p.endswith(".") for p in parts[:-1])
    assert " ".join(parts).split() == text.split()


def test_real_book_pages_stable_and_sized(books_dir: Path) -> None:
    a = parse_book(books_dir / "alice_in_wonderland.epub")
    b = parse_book(books_dir / "alice_in_wonderland.epub")
    assert a.pages == b.pages
    sizes = [len(p.text) for p in a.pages]
    assert 1500 <= sorted(sizes)[len(sizes) // 2] <= 2300, "about 2,000 characters a page"
    chunks = make_chunks(a.pages)
    lengths = sorted(len(c.text) for c in chunks)
    assert 900 <= lengths[len(lengths) // 2] <= 1500
    assert max(lengths) <= 1900


@given(
    st.text(st.sampled_from("ab1 .,;!?\u201d\u2019'\"\n\u00e9\u4e00_-"), min_size=1, max_size=300),
    st.integers(min_value=8, max_value=60),
)
@settings(max_examples=300, deadline=None)
def test_a_plain_blocks_cuts_are_the_letter_counting_ones(text: str, limit: int) -> None:
    """A block whose HTML is its text is cut where counting letters through its HTML cuts
    it (the quick way a text book's long paragraphs take)."""
    from core.books.pagecuts import _split_marked, _split_plain, split_long_text

    parts = split_long_text(text, limit)
    assert _split_plain(text, parts) == _split_marked(text, text, parts)


def test_a_real_books_long_paragraphs_cut_the_same_both_ways(books_dir: Path) -> None:
    from core.books.pagecuts import _split_marked, _split_plain, split_long_text

    text = (books_dir / "metamorphosis.txt").read_text(encoding="utf-8")
    long = [p.replace("\n", " ") for p in text.split("\n\n") if len(p) > 3000]
    assert len(long) >= 5
    for block in long:
        parts = split_long_text(block, 2000)
        assert _split_plain(block, parts) == _split_marked(block, block, parts) is not None


@given(
    st.text(st.sampled_from("ab .!?…;:—\u201d'\n)"), min_size=1, max_size=120),
    st.integers(min_value=1, max_value=130),
    st.integers(min_value=0, max_value=130),
)
@settings(max_examples=500, deadline=None)
def test_boundaries_end_where_the_look_behind_patterns_ended(
    window: str, limit: int, ideal: int
) -> None:
    """The sentence and clause ends match their mark (a quick search) and give the ends the
    look-behind patterns of before gave."""
    import re

    from core.books import pagecuts as pages

    before = {
        pages._SENTENCE_END: re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+"),
        pages._CLAUSE_END: re.compile(r"(?<=[;:—])\s+"),
        pages._VERSE_SENTENCE_END: re.compile(r"(?<=[.!?…])[\"'”’)\]]*\n"),
    }
    for now, old in before.items():
        low = limit // 3
        assert [m.end() for m in now.finditer(window, max(low - 1, 0))] == [
            m.end() for m in old.finditer(window, low)
        ]
        assert pages._best_cut(window, limit, ideal, now) == pages._best_cut(
            window, limit, ideal, old, mark=0
        )


def test_a_chunk_made_quickly_is_the_dataclass_made_by_hand() -> None:
    import dataclasses

    from core.books.chunking import _chunk
    from core.books.model import ChunkContent

    quick = _chunk(1, 2, 3, 4, "text")
    made = ChunkContent(ordinal=1, start_page=2, end_page=3, chapter=4, text="text")
    assert quick == made and hash(quick) == hash(made) and repr(quick) == repr(made)
    assert dataclasses.asdict(quick) == dataclasses.asdict(made)
