"""The words' side of search: Okapi BM25 with the book's own term weights (how often a
passage holds each word, for its length), possessives in questions, and any text as a query;
on real fixture books, with the reader's bound and without front matter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.frontmatter import is_front_matter
from core.search.hits import query_terms
from core.search.ranking import bm25
from core.search.vector_indexer import indexer_for
from core.store.library import BookInfo, Library
from tests.conftest import BOOKS
from tests.support.encoded import encoded_home

# found by the hybrid search (Find, ``margin search``) once BM25 counts the words; the
# weights summed (a passage holding "father" once as much as one about him) missed it
PARAPHRASE = "What did his father wear once he had a job again?"
ANSWER = "smart blue uniform with gold buttons"


def _fold(text: str) -> str:
    return " ".join(text.replace("\u00ad", "").lower().split())


@pytest.fixture(scope="module")
def books(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Library, BookInfo, BookInfo]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("ranking-home")))
    alice = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    gregor = import_book(lib, BOOKS / "metamorphosis.epub").book
    assert indexer_for(lib.db).wait(120), "the static vectors follow the import"
    yield lib, alice, gregor
    lib.close()


def test_bm25_counts_how_often_a_passage_holds_a_word() -> None:
    text = "The Gryphon sat up. " + "Some filler words about nothing much. " * 3
    often = text + "The Gryphon sang, and the Gryphon danced."
    held = {1: ['"gryphon"'], 2: ['"gryphon"']}
    scores = bm25({1: text + "x" * 42, 2: often}, held, {'"gryphon"': 2.0})
    assert scores[2] > scores[1] > 0


def test_bm25_weighs_a_longer_passage_less_for_the_same_words() -> None:
    short = "She found a little golden key on the table."
    long = short + " Then she walked on through the long hall for quite a while." * 6
    scores = bm25({1: short, 2: long}, {1: ['"key"'], 2: ['"key"']}, {'"key"': 1.5})
    assert scores[1] > scores[2] > 0


def test_bm25_counts_a_word_the_index_matched_at_least_once() -> None:
    """The index stems with Porter ("ponies" finds "pony"); the light stem that counts the
    words does not: a passage the index matched still counts the term once."""
    scores = bm25({7: "A pony stood in the yard."}, {7: ['"ponies"']}, {'"ponies"': 1.0})
    assert scores[7] > 0


def test_rare_words_weigh_more_than_common_ones() -> None:
    texts = {1: "The rabbit ran past.", 2: "The hookah smoked on."}
    held = {1: ['"rabbit"'], 2: ['"hookah"']}
    scores = bm25(texts, held, {'"rabbit"': 0.5, '"hookah"': 3.0})
    assert scores[2] > scores[1]


def test_a_possessive_asks_for_the_word_itself(books: tuple[Library, BookInfo, BookInfo]) -> None:
    """Alice never writes "Gryphon's": the question's possessive used to find nothing."""
    lib, alice, _ = books
    assert query_terms("What was the Gryphon's song?") == ['"Gryphon"', '"song"']
    assert query_terms('"the Queen\'s croquet"') == ['"the Queen\'s croquet"']  # as written
    search = BookSearch(lib.db)
    for hybrid in (False, True):
        hits = search.search_book(alice.id, "the Gryphon's song", limit=5, hybrid=hybrid)
        assert hits and all("gryphon" in h.text.lower() for h in hits[:3])


def test_hybrid_finds_a_paraphrase_the_summed_weights_missed(
    books: tuple[Library, BookInfo, BookInfo],
) -> None:
    lib, _, gregor = books
    search = BookSearch(lib.db)
    hits = search.search_book(gregor.id, PARAPHRASE, limit=5)
    assert any(ANSWER in _fold(h.text) for h in hits)
    assert not any(is_front_matter(h.text) for h in hits)


def test_the_reading_bound_holds(books: tuple[Library, BookInfo, BookInfo]) -> None:
    lib, _, gregor = books
    search = BookSearch(lib.db)
    whole = search.search_book(gregor.id, PARAPHRASE, limit=5)
    page = min(h.start_page for h in whole if ANSWER in _fold(h.text))
    bound = max(1, page - 1)
    for deep in (False, True):
        hits = search.search_book(gregor.id, PARAPHRASE, limit=5, until_page=bound, deep=deep)
        assert hits and all(h.end_page <= bound for h in hits)
        assert not any(ANSWER in _fold(h.text) for h in hits)


def test_front_matter_never_ranks_though_it_holds_the_words(
    books: tuple[Library, BookInfo, BookInfo],
) -> None:
    """The contents page holds every chapter title, often twice: BM25's counting must not
    bring it back."""
    lib, alice, _ = books
    search = BookSearch(lib.db)
    titles = "Down the Rabbit-Hole, the Pool of Tears, a Caucus-Race, a Mad Tea-Party"
    for options in ({"hybrid": False}, {}, {"deep": True}):
        hits = search.search_book(alice.id, titles, limit=10, **options)
        assert hits and not any(is_front_matter(h.text) for h in hits)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "?!… — ,;",
        '"',
        '"""',
        "AND OR NOT NEAR(",
        "what was it?",
        "title:alice* ^rabbit -hole {a b} (((",
        "Alice's Queen's King's ''s 's",
        ("the rabbit’s watch and the Hatter's tea, " * 250)[:10_240],
    ],
)
def test_any_text_is_a_query(books: tuple[Library, BookInfo, BookInfo], query: str) -> None:
    lib, alice, _ = books
    search = BookSearch(lib.db)
    for options in ({"hybrid": False}, {}, {"deep": True}):
        hits = search.search_book(alice.id, query, limit=5, **options)
        assert len(hits) <= 5
        assert not any(is_front_matter(h.text) for h in hits)


@pytest.mark.timeout(600)
def test_deep_search_finds_a_paraphrase_the_summed_weights_missed(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The answers' search (the agent's tool, passages mode): BM25's ranking fused with the
    sentence encoder's, on Metamorphosis with its encoder vectors (computed once a run and
    shared: tests/support/encoded.py; how a deep search asks for them in the background is
    test_sentence_vectors.py's)."""
    home, _alice, gregor = encoded_home(tmp_path_factory)
    lib = Library.open(resolve_paths(home))
    try:
        search = BookSearch(lib.db)
        assert search.sentences.has(gregor)
        question = "How did the mother earn money for the household?"
        hits = search.search_book(gregor, question, limit=5, deep=True)
        assert any("sew fancy underwear for a fashion shop" in _fold(h.text) for h in hits)
        assert not any(is_front_matter(h.text) for h in hits)
        bound = min(h.start_page for h in hits if "fancy underwear" in _fold(h.text)) - 1
        early = search.search_book(gregor, question, limit=5, until_page=bound, deep=True)
        assert all(h.end_page <= bound for h in early)
        bm25 = search.search_book(gregor, question, limit=5, hybrid=False)
        assert not any("fancy underwear" in _fold(h.text) for h in bm25), "a paraphrase"
    finally:
        lib.close()


def test_the_encoder_query_leaves_out_a_name_most_passages_hold(
    books: tuple[Library, BookInfo, BookInfo],
) -> None:
    """ "Gregor" is in most passages of Metamorphosis: the sentence encoder ranked by it (the
    page saying what he has become came 30th); it is left out of the encoder's query, and a
    word few passages hold stays. A query of common words only is kept whole."""
    lib, _alice, gregor = books
    search = BookSearch(lib.db)
    rowids = search.chunk_range(gregor.id, 30)
    assert rowids is not None
    asked = "What has Gregor become when he wakes up?"
    telling = search._telling(asked, query_terms(asked), rowids)
    assert "Gregor" not in telling and "become" in telling
    assert search._telling("Gregor's", query_terms("Gregor's"), rowids) == "Gregor's"
