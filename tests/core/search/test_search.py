from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, SearchHit, sanitize_query
from core.store.library import BookInfo, Library

_search: BookSearch | None = None


def search_book(book_id: int, query: str, **options: int) -> list[SearchHit]:
    assert _search is not None
    return _search.search_book(book_id, query, **options)


def search_all(query: str, **options: int) -> list[tuple[int, list[SearchHit]]]:
    assert _search is not None
    return _search.search_all(query, bounded=False, **options)


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, BookInfo]]:
    from tests.conftest import BOOKS

    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("search-home")))
    book = import_book(lib, BOOKS / "alice_in_wonderland.epub").book
    other = import_book(lib, BOOKS / "metamorphosis.epub").book
    assert other.id != book.id
    global _search
    _search = BookSearch(lib.db)
    yield lib, book
    _search = None
    lib.close()


def test_best_passages_first_with_pages_and_snippet(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    hits = search_book(book.id, "Cheshire Cat grin", limit=5)
    assert len(hits) == 5
    every = [h for h in hits if all(w in h.text.lower() for w in ("cheshire", "cat", "grin"))]
    assert every and hits[: len(every)] == every, "passages with every term come first"
    assert [h.score for h in every] == sorted((h.score for h in every), reverse=True)
    assert all(
        h.book_id == book.id and 1 <= h.start_page <= h.end_page <= book.page_count for h in hits
    )
    assert "«" in hits[0].snippet and "»" in hits[0].snippet
    assert "cheshire" in hits[0].text.lower()


def test_results_stay_in_their_book(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    assert search_book(book.id, "Gregor Samsa") == []
    assert any(book_id != book.id for book_id, _ in search_all("Gregor"))


def test_spoiler_bound_is_applied_in_sql(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    unbounded = search_book(book.id, "Hatter", limit=100, hybrid=False)
    bound = 50
    bounded = search_book(book.id, "Hatter", limit=3, until_page=bound, hybrid=False)
    before = [h for h in unbounded if h.end_page <= bound]
    assert len(bounded) == min(3, len(before)) > 0
    assert all(h.end_page <= bound for h in bounded)
    assert [h.chunk_id for h in bounded] == [h.chunk_id for h in before[:3]]
    assert [h for h in unbounded if h.end_page > bound], "the book has more Hatter later"
    assert _search is not None and _search.continues_beyond(book.id, bound)
    assert not _search.continues_beyond(book.id, book.page_count)
    assert search_book(book.id, "Hatter", until_page=1) == []
    meaning = search_book(book.id, "a tea party that never ends", limit=10, until_page=bound)
    assert meaning and all(h.end_page <= bound for h in meaning), "the vectors obey the bound"


def test_phrases(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    phrase = search_book(book.id, '"off with her head"', limit=50)
    assert phrase and all("off with her head" in " ".join(h.text.lower().split()) for h in phrase)
    assert sanitize_query('"off with her head" queen') == '"off with her head" AND "queen"'


def test_natural_question_falls_back_to_any_term(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    hits = search_book(book.id, "why was the Duchess's baby turning into a pig?", limit=3)
    assert hits and any("pig" in h.text.lower() for h in hits)


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "AND",
        "OR NOT",
        "a NEAR b",
        "*",
        "(((",
        "col:umn",
        "^start",
        "-",
        "a - b",
        "NEAR(",
        "'",
        "😀",
        "",
    ],
)
def test_operator_text_never_raises(alice: tuple[Library, BookInfo], query: str) -> None:
    _, book = alice
    assert isinstance(search_book(book.id, query), list)
    assert isinstance(search_book(book.id, query, until_page=10), list)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=80))
def test_any_text_is_a_valid_query(alice: tuple[Library, BookInfo], query: str) -> None:
    _, book = alice
    hits = search_book(book.id, query, until_page=40)
    assert all(h.end_page <= 40 for h in hits)


def test_empty_query_means_no_hits(alice: tuple[Library, BookInfo]) -> None:
    _, book = alice
    assert search_book(book.id, "   ") == []
    assert sanitize_query("?!.,") == ""


def test_hyphenated_and_diacritics(alice: tuple[Library, BookInfo], tmp_path: Path) -> None:
    lib, book = alice
    assert search_book(book.id, "Rabbit-Hole")
    text = tmp_path / "cafe.txt"
    text.write_text("Le café était fermé ce jour-là.\n\nAutre paragraphe.", encoding="utf-8")
    cafe = import_book(lib, text).book
    assert search_book(cafe.id, "cafe etait ferme")
    assert search_book(cafe.id, "Café")


def plan(db: object, sql: str, params: tuple[object, ...]) -> list[str]:
    rows = db.execute_sql(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()  # type: ignore[attr-defined]
    return [str(r[3]) for r in rows]


def test_query_plans_stay_inside_the_book(alice: tuple[Library, BookInfo]) -> None:
    """Issue 17, item 12: a bad plan (ranking every match of the library, a scan of the
    chunk table, a sorter building a snippet per match) fails here, not only in a benchmark."""
    from core.search import rows
    from core.search.query import MATCHING

    library, book = alice
    matching = plan(library.db, MATCHING, ('"alice"', 1, 10))
    assert len(matching) == 1, matching  # no sorter (USE TEMP B-TREE), no join
    detail = matching[0]
    assert detail.startswith("SCAN chunk_index VIRTUAL TABLE INDEX"), detail
    index_string = detail.rsplit(":", 1)[1]
    assert "M" in index_string  # MATCH inside FTS5
    assert ">" in index_string and "<" in index_string  # the rowid range inside FTS5
    for sql, params in ((rows.RANGE, (book.id,)), (rows.RANGE_UNTIL, (5, book.id))):
        steps = plan(library.db, sql, params)
        assert any("USING" in s and "INDEX" in s and "book_id" in s for s in steps), steps
        assert not any(s.startswith("SCAN chunk") for s in steps), steps
