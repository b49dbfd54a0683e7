"""Phrases and NEAR on the index without positions (issue 41, core/search/positions.py): the
passages found are the ones FTS5 with positions (detail=full, the index before) finds."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from core.agent.spoiler_index import SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, positions
from core.store.library import BookInfo, Library

# phrases, words with an apostrophe (two words for FTS5), NEAR groups, mixed expressions
EXPRESSIONS = [
    '"queen of hearts"',
    '"hearts of queen"',  # every word in some passages, never in this order
    '"the white rabbit"',
    '"rabbit white"',
    '"don\'t"',
    '"i\'m"',
    '"alice" AND "mock turtle"',
    '"queen of hearts" OR "cheshire cat"',
    'NEAR("knave" "tarts", 20)',
    'NEAR("knave" "tarts", 2)',
    'NEAR("alice" "dinah", 5)',
    'NEAR("mock turtle" "gryphon", 10)',
    '"alice"',
]


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, BookInfo]]:
    from tests.conftest import BOOKS

    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("positions-home")))
    book = import_book(lib, BOOKS / "alice_in_wonderland.txt").book
    yield lib, book
    lib.close()


@pytest.fixture(scope="module")
def with_positions(alice: tuple[Library, BookInfo]) -> Iterator[sqlite3.Connection]:
    """The same passages in an FTS5 table with positions, as the index was before."""
    lib, _ = alice
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{positions.TOKENIZE}')")
    con.executemany(
        "INSERT INTO t(rowid, x) VALUES (?, ?)",
        lib.db.execute_sql("SELECT id, text FROM chunk_text").fetchall(),
    )
    yield con
    con.close()


def test_the_index_refuses_phrases_itself(alice: tuple[Library, BookInfo]) -> None:
    lib, _ = alice
    with pytest.raises(Exception, match="detail"):
        lib.db.execute_sql(
            "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?", ('"queen of hearts"',)
        ).fetchall()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_phrases_and_near_find_what_positions_find(
    alice: tuple[Library, BookInfo], with_positions: sqlite3.Connection, expression: str
) -> None:
    lib, _ = alice
    want = [
        r[0] for r in with_positions.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))
    ]
    found = positions.execute(
        lib.db,
        "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ? ORDER BY rowid",
        (expression,),
        positions.chunk_texts(lib.db),
    )
    assert [r[0] for r in found] == sorted(want)


def test_words_out_of_order_are_no_phrase(
    alice: tuple[Library, BookInfo], with_positions: sqlite3.Connection
) -> None:
    """Passages with every word of "hearts of queen" exist; none has them in that order."""
    lib, book = alice
    words = '"hearts" AND "of" AND "queen"'
    assert with_positions.execute("SELECT count(*) FROM t WHERE t MATCH ?", (words,)).fetchone()[0]
    assert (
        positions.execute(
            lib.db,
            "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?",
            ('"hearts of queen"',),
            positions.chunk_texts(lib.db),
        )
        == []
    )
    assert BookSearch(lib.db).search_book(book.id, '"hearts of queen"', hybrid=False) == []
    hits = BookSearch(lib.db).search_book(book.id, '"queen of hearts"', hybrid=False)
    assert hits and all("queen of hearts" in h.text.lower() for h in hits)


def test_limit_and_order_apply_to_the_passages_that_match(alice: tuple[Library, BookInfo]) -> None:
    lib, _ = alice
    every = positions.execute(
        lib.db,
        "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ? ORDER BY rowid",
        ('"the queen"',),
        positions.chunk_texts(lib.db),
    )
    first = positions.execute(
        lib.db,
        "SELECT rowid FROM chunk_index WHERE chunk_index MATCH ? ORDER BY rowid LIMIT ?",
        ('"the queen"', 3),
        positions.chunk_texts(lib.db),
    )
    assert len(every) > 3 and first == every[:3]


def test_the_passages_that_match_filter_one_scan_of_the_index(
    alice: tuple[Library, BookInfo], with_positions: sqlite3.Connection
) -> None:
    """The passages a phrase matches narrow FTS5's own answer as a filter: given them as a
    rowid IN (...) constraint, FTS5 ran the query once per passage, each time reading the
    words' passages from the first (13 ms for 106 passages in 50 books, 0.8 ms as a filter),
    and preferred that to the book's rowid range."""
    from core.search.query import MATCHING

    lib, _ = alice
    seen: list[str] = []
    run = lib.db.execute_sql

    class Spy:
        def execute_sql(self, sql: str, params: object = ()) -> object:
            seen.append(sql)
            return run(sql, params)

    expression = '"queen of hearts"'
    found = positions.execute(
        Spy(), MATCHING, (expression, 1, 10**9), positions.chunk_texts(lib.db), (1, 10**9)
    )
    want = {
        r[0] for r in with_positions.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))
    }
    assert {r[0] for r in found} == want and want
    restricted = seen[-1]
    plan = run(f"EXPLAIN QUERY PLAN {restricted}", (positions.loosen(expression), 1, 10**9))
    (detail,) = [str(r[3]) for r in plan.fetchall()]
    index_string = detail.rsplit(":", 1)[1]
    assert "M" in index_string and ">" in index_string and "<" in index_string, detail
    assert "=" not in index_string, detail  # no lookup of each passage by its rowid


def test_the_spoiler_checks_phrases_and_near(
    alice: tuple[Library, BookInfo], with_positions: sqlite3.Connection
) -> None:
    lib, book = alice
    index = SpoilerIndex.build(lib.db, book.id)
    first, count = index.phrase("queen of hearts")
    assert count > 0 and first > 1
    assert index.phrase("hearts of queen") == (0, 0)
    assert index.near("knave", "tarts")
    near = 'NEAR("alice" "zzzz", 20)'
    assert not with_positions.execute("SELECT 1 FROM t WHERE t MATCH ?", (near,)).fetchone()
    assert not index.near("alice", "zzzz")


@pytest.mark.parametrize(
    ("expression", "loose"),
    [
        ('"queen of hearts"', '("queen" AND "of" AND "hearts")'),
        ('"alice" OR "don\'t"', '"alice" OR ("don" AND "t")'),
        ('NEAR("knave" "tarts", 20)', '("knave" AND "tarts")'),
        ('"a""b c"', '("a" AND "b" AND "c")'),
        ('"alice" AND "rabbit"', '"alice" AND "rabbit"'),
    ],
)
def test_loosened_expressions(expression: str, loose: str) -> None:
    assert positions.loosen(expression) == loose
    assert positions.needs_positions(expression) == (loose != expression)


def test_lengths_and_averages_are_the_indexs_own(
    alice: tuple[Library, BookInfo], with_positions: sqlite3.Connection
) -> None:
    """Ranking without FTS5's bm25() reads the words FTS5 counted in each passage and in the
    whole index (its docsize table and record of averages) without reading any text."""
    from core.search.rows import index_averages, index_lengths

    lib, _ = alice
    with_positions.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    counted = dict(with_positions.execute("SELECT doc, count(*) FROM v GROUP BY doc"))
    ids = sorted(counted)
    assert index_lengths(lib.db, ids) == counted
    assert index_averages(lib.db) == (len(counted), sum(counted.values()))
