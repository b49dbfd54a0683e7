"""Vectors of a book's chunks: written at import, kept through a re-read and the migration,
missing in an old library (which still searches, then gains them); front matter never
ranks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books.importer import import_book, reimport_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.frontmatter import is_front_matter
from core.search.vector_indexer import indexer_for
from core.search.vectors import DIMS, BookVectors, pack, unpack
from core.store.library import BookInfo, Library
from core.store.migrations import (
    SCHEMA_VERSION,
    current_version,
    migrate,
)
from tests.conftest import BOOKS


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, BookInfo]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("vectors-home")))
    book = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    assert indexer_for(lib.db).wait(60), "the vectors follow the import in the background"
    yield lib, book
    lib.close()


def _row(lib: Library, book_id: int) -> tuple[int, int, int] | None:
    row = lib.db.execute_sql(
        "SELECT first_chunk, count, length(data) FROM chunk_vectors WHERE book_id = ?", (book_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def test_import_stores_int8_vectors_for_every_chunk(library: tuple[Library, BookInfo]) -> None:
    lib, book = library
    first, count = lib.db.execute_sql(
        "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book.id,)
    ).fetchone()
    assert _row(lib, book.id) == (first, count, count * DIMS)
    assert BookVectors(lib.db).missing() == []


def test_pack_keeps_direction() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((5, 256)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    back = unpack(pack(matrix), 256)
    assert back.shape == (5, 256)
    assert (np.sum(back * matrix, axis=1) > 0.999).all()


def test_meaning_finds_what_keywords_rank_low(library: tuple[Library, BookInfo]) -> None:
    lib, book = library
    search = BookSearch(lib.db)
    rowids = search.chunk_range(book.id)
    assert rowids is not None
    near = search.vectors.nearest(book.id, "a tea party where it is always six o'clock", rowids, 5)
    assert near
    texts = [h.text for h in search._hits([c for c, _ in near], book.id, {}, {})]
    assert any("tea" in t.lower() for t in texts)


def test_front_matter_never_ranks(library: tuple[Library, BookInfo]) -> None:
    lib, book = library
    search = BookSearch(lib.db)
    # the contents page names every chapter; the licence names the book and its author
    for query in (
        "Lobster Quadrille Mock Turtle Caterpillar chapter",
        "contents",
        "Project Gutenberg license",
        "Lewis Carroll Alice's Adventures in Wonderland",
        "who stole the tarts",
    ):
        for hybrid in (True, False):
            hits = search.search_book(book.id, query, limit=10, hybrid=hybrid)
            assert all(not is_front_matter(h.text) for h in hits), query
            assert all("CHAPTER II. · The Pool of Tears" not in h.text for h in hits), query
            assert all("Gutenberg" not in h.text for h in hits), query
    # still readable: the contents page is a page of the book
    assert any("Pool of Tears" in text for _, text in lib.page_texts(book.id)[:3])


@pytest.mark.parametrize(
    ("text", "front"),
    [
        (
            "Contents\n\nCHAPTER I. · Down the Rabbit-Hole\nCHAPTER II. · The Pool of Tears\n"
            "CHAPTER III. · A Caucus-Race\nCHAPTER IV. · The Rabbit Sends in a Little Bill",
            True,
        ),
        ("Metamorphosis\n\nby Franz Kafka\n\nTranslated by David Wyllie", True),
        ("Copyright © 1999 Someone. All rights reserved. ISBN 978-0-00-000000-0", True),
        ("List of Illustrations\n\nThe Rabbit\nThe Queen\nThe Trial\nThe Cat", True),
        (
            "This eBook is for the use of anyone anywhere, under the Project Gutenberg License.",
            True,
        ),
        ("“Off with her head!” the Queen shouted at the top of her voice. Nobody moved.", False),
        (
            "How doth the little crocodile\nImprove his shining tail,\nAnd pour the waters of "
            "the Nile\nOn every golden scale!",
            False,
        ),
    ],
)
def test_front_matter_detection(text: str, front: bool) -> None:
    assert is_front_matter(text) is front


def test_vectors_survive_reimport(tmp_path: Path) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, BOOKS / "metamorphosis.epub").book
    assert indexer_for(lib.db).wait(60)
    before = _row(lib, book.id)
    reimport_book(lib, book.id)
    assert indexer_for(lib.db).wait(60)
    after = _row(lib, book.id)
    first, count = lib.db.execute_sql(
        "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book.id,)
    ).fetchone()
    assert before is not None and after == (first, count, count * DIMS)
    assert BookSearch(lib.db).vectors.has(book.id)
    lib.delete_book(book.id)
    assert _row(lib, book.id) is None
    lib.close()


def test_old_library_searches_then_gains_vectors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lib = Library.open(resolve_paths(home))
    book = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    indexer = indexer_for(lib.db)
    assert indexer.wait(60)
    indexer.stop()  # this test indexes by hand
    # as a library from before the vectors: no table, the version before their step (later
    # helpers' migrations may follow it)

    lib.db.execute_sql("DROP TABLE chunk_vectors")
    from core.store import migrations

    before = migrations.MIGRATIONS.index(migrations._v13_chunk_vectors)  # later ones run too
    lib.db.execute_sql(f"PRAGMA user_version = {before}")
    lib.close()
    lib = Library.open(resolve_paths(home))
    assert current_version(lib.db) == SCHEMA_VERSION
    assert migrate(lib.db) == SCHEMA_VERSION  # nothing more to do
    search = BookSearch(lib.db)
    vectors = search.vectors
    assert vectors.missing() == [book.id] and not vectors.has(book.id)
    hits = search.search_book(book.id, "Why is a raven like a writing-desk?", limit=5)
    assert hits and any("raven" in h.text.lower() for h in hits), "BM25 alone still works"
    # that search asked for the vectors: they come in the background, with progress
    background = indexer_for(lib.db)
    seen: list[tuple[int, int]] = []
    background.listeners.append(lambda done, total: seen.append((done, total)))
    background.request()
    assert background.wait(60)
    assert seen == [(1, 1)] and vectors.missing() == [] and vectors.has(book.id)
    assert search.search_book(book.id, "Why is a raven like a writing-desk?", limit=5)
    background.stop()
    lib.close()


def test_words_are_weighed_by_the_book_without_fts5_ranking(
    library: tuple[Library, BookInfo],
) -> None:
    """With vectors, the words' ranking reads each term's chunks in the book's rowid range
    without FTS5's bm25 (which reads the term's postings in every book of the library): a
    chunk weighs the book's own rarity of the terms it holds (BM25's counts are read for the
    best of these, ``_ranked_bm25``), and nothing past the bound is read."""
    import math

    from core.search import fts

    lib, book = library
    search = BookSearch(lib.db)
    bounded = search.chunk_range(book.id, until_page=40)
    assert bounded is not None
    cosines = search.vectors.cosines(book.id, "a caterpillar smoking", bounded)
    assert cosines is not None and len(cosines[1]) == bounded[1] - bounded[0] + 1
    terms = fts.query_terms("the Caterpillar and its hookah, said Alice")
    score, _, _, every = search._held(terms, bounded, book.id)
    holding = {
        t: {int(r[0]) for r in lib.db.execute_sql(fts.MATCHING, (t, *bounded)).fetchall()}
        for t in terms
    }
    total = bounded[1] - bounded[0] + 1
    weight = {t: math.log(1 + (total - len(c) + 0.5) / (len(c) + 0.5)) for t, c in holding.items()}
    assert score and set(score) == set.union(*holding.values())
    for chunk_id, summed in score.items():
        assert bounded[0] <= chunk_id <= bounded[1]
        assert summed == pytest.approx(sum(weight[t] for t in terms if chunk_id in holding[t]))
    assert every == set.intersection(*holding.values()) and every
    detail = lib.db.execute_sql(f"EXPLAIN QUERY PLAN {fts.MATCHING}", ('"alice"', *bounded))
    plan = [str(r[3]) for r in detail.fetchall()]
    assert len(plan) == 1 and ">" in plan[0] and "<" in plan[0], plan  # the range in FTS5


def test_the_packaged_weights_hold_the_columns_search_reads(tmp_path: Path) -> None:
    """The bundle ships only the DIMS columns of the wheel's token vectors (half its 16 MB):
    read back, they are the very numbers the wheel's file gives."""
    from core.search import embedding

    written = embedding.write_weights(tmp_path / "weights")
    full, _ = embedding.model_files()
    assert written.name == f"l2_supercat_{DIMS}.safetensors"
    assert written.stat().st_size < full.stat().st_size * 0.6
    assert (embedding._read_table(written) == embedding._read_table(full)).all()
