"""Japanese and Chinese books are searchable (issue 45, item 1): any word or phrase of a real
novel is found, though these languages put no spaces between words. Phrases are sampled
from the books' own text (a fixed seed), so the recall is measured, not chosen."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.cjk import expression, route
from core.store.cjk_index import grams, has_cjk
from core.store.library import BookInfo, Library
from core.store.page_blocks import margin_page
from tests.conftest import BOOKS

KOKORO = BOOKS / "kokoro_excerpt.txt"
HONGLOUMENG = BOOKS / "hongloumeng_excerpt.txt"
PHRASES = 60


def sample_phrases(text: str, count: int, seed: int) -> list[str]:
    """``count`` phrases of 2-8 characters of ideographs and kana, at random places."""
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        at = rng.randrange(len(text) - 10)
        size = rng.randint(2, 8)
        piece = text[at : at + size]
        if len(piece) == size and all(has_cjk(c) for c in piece) and piece not in found:
            found.append(piece)
    return found


@pytest.fixture(scope="module")
def books(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[BookSearch, BookInfo, BookInfo]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("cjk-home")))
    ja = import_book(lib, KOKORO).book
    zh = import_book(lib, HONGLOUMENG).book
    import_book(lib, BOOKS / "alice_in_wonderland.txt")
    yield BookSearch(lib.db), ja, zh
    lib.close()


def found(search: BookSearch, book: BookInfo, phrase: str) -> bool:
    hits = search.search_book(book.id, phrase, limit=5)
    return any(phrase in "".join(h.text.split()) for h in hits)


def recall(search: BookSearch, book: BookInfo, phrases: list[str]) -> float:
    return sum(found(search, book, p) for p in phrases) / len(phrases)


def test_a_word_inside_a_run_of_japanese_is_found(
    books: tuple[BookSearch, BookInfo, BookInfo],
) -> None:
    search, ja, _ = books
    # "鎌倉" only ever stands inside longer runs ("私が先生と知り合いになったのは鎌倉である")
    assert found(search, ja, "鎌倉")
    assert found(search, ja, "掛茶屋")
    assert found(search, ja, "私はその人を常に先生と呼んでいた")  # the opening sentence
    assert found(search, ja, "先")  # one character
    assert search.search_book(ja.id, "鎌倉海岸の西洋人の眼鏡屋") == []  # not in the book


def test_japanese_recall_on_sampled_phrases(books: tuple[BookSearch, BookInfo, BookInfo]) -> None:
    search, ja, _ = books
    text = KOKORO.read_text(encoding="utf-8")
    assert recall(search, ja, sample_phrases(text, PHRASES, seed=45)) >= 0.95


def test_chinese_recall_on_sampled_phrases(books: tuple[BookSearch, BookInfo, BookInfo]) -> None:
    search, _, zh = books
    text = HONGLOUMENG.read_text(encoding="utf-8")
    assert recall(search, zh, sample_phrases(text, PHRASES, seed=45)) >= 0.95
    assert found(search, zh, "贾雨村") and found(search, zh, "通灵")


def test_library_search_finds_chinese(books: tuple[BookSearch, BookInfo, BookInfo]) -> None:
    search, _, zh = books
    places = search.search_all("宝玉", bounded=False)
    assert [book_id for book_id, _ in places] == [zh.id]
    assert search.search_all("Alice", bounded=False)  # other books are searched as before


def test_grams_and_queries() -> None:
    assert grams("日本の小説家、Tokyo") == " 日本 本の の小 小説 説家 家 、Tokyo"
    assert expression('"小説家" AND "Tokyo"') == '"小説 説家" AND "Tokyo"'
    assert expression('"猫"') == '"猫"*'
    sql, match = route("SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?", '"cat"')
    assert "chunk_index" in sql and match == '"cat"'
    sql, _ = route("SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?", '"猫"')
    assert "cjk_index" in sql and "chunk_index" not in sql


def test_a_removed_book_leaves_no_index_rows(tmp_path_factory: pytest.TempPathFactory) -> None:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("cjk-delete")))
    try:
        book = import_book(lib, KOKORO).book
        count = "SELECT count(*) FROM cjk_index"
        assert lib.db.execute_sql(count).fetchone()[0] > 0
        lib.delete_book(book.id)
        assert lib.db.execute_sql(count).fetchone()[0] == 0
    finally:
        lib.close()


def test_sentences_end_at_chinese_and_japanese_full_stops() -> None:
    from core.companions.names import split_sentences
    from core.search.sentences import sentences

    text = "私は先生と呼んでいた。「先生は？」と聞いた。何でしょう！列位看官：你道此书从何而来？"
    want = [
        "私は先生と呼んでいた。",
        "「先生は？」と聞いた。",
        "何でしょう！",
        "列位看官：你道此书从何而来？",
    ]
    assert sentences(text) == want
    assert split_sentences(text) == want  # X-Ray's and the recap's
    assert sentences("Mr. Holmes came. He sat.") == ["Mr. Holmes came.", "He sat."]


def test_the_spoiler_index_finds_a_japanese_phrase(
    books: tuple[BookSearch, BookInfo, BookInfo],
) -> None:
    from core.agent.spoiler_index import SpoilerIndex

    search, ja, _ = books
    index = SpoilerIndex.build(search.db, ja.id)
    first, count = index.phrase("掛茶屋")
    assert first >= 1 and count >= 1


def test_the_migration_cuts_the_books_already_there(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library from before ``cjk_index``: its Japanese book is found once it is opened."""
    import peewee as pw

    from core.store import cjk_index, migrations
    from core.store import models as m
    from core.store.db import PRAGMAS

    home = resolve_paths(tmp_path_factory.mktemp("cjk-migrate"))
    home.ensure()
    db = pw.SqliteDatabase(str(home.database), pragmas=PRAGMAS)
    db.bind(m.ALL_MODELS, bind_refs=False, bind_backrefs=False)
    db.register_function(m.page_text, "margin_text", 1, deterministic=True)
    db.register_function(m.unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    before = migrations.MIGRATIONS.index(migrations._cjk_index)
    for version in range(1, before + 1):
        with db.atomic():
            migrations.MIGRATIONS[version - 1](db)
            db.execute_sql(f"PRAGMA user_version = {version}")
    with monkeypatch.context() as patched:  # the import of before: no cjk_index to write
        patched.setattr(cjk_index, "index_rows", lambda cursor, rows: 0)
        book = import_book(Library(home, db), KOKORO).book
    db.close()
    lib = Library.open(home)  # migrates
    try:
        assert found(BookSearch(lib.db), book, "掛茶屋")
    finally:
        lib.close()


def test_the_spoiler_check_splits_a_streamed_japanese_answer_at_full_stops() -> None:
    from core.agent.spoiler_text import boundaries

    text = "私は先生と呼んでいた。「先生は？」と聞いた。何でしょう！次"
    assert [text[b:] for b in boundaries(text, 0)] == [
        "「先生は？」と聞いた。何でしょう！次",
        "何でしょう！次",
        "次",
    ]
    for cut in range(1, len(text)):  # streamed in two pieces: the same boundaries
        first = boundaries(text[:cut], 0)
        assert sorted({*first, *boundaries(text, cut)}) == boundaries(text, 0)
    assert boundaries("Hello there. He went.", 0) == [13]


def test_a_hit_shows_its_words_in_a_short_snippet(
    books: tuple[BookSearch, BookInfo, BookInfo],
) -> None:
    search, ja, _ = books
    hit = search.search_book(ja.id, "掛茶屋", limit=1)[0]
    assert "«掛茶屋»" in hit.snippet and len(hit.snippet) < 120
