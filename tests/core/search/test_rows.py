"""Passages read with their pages' blocks (``rows.chunk_rows``, issue 41): each block inflated
once and only as far as the last page needed, the very text the view ``chunk_text`` gives,
and a damaged block told, never a wrong passage."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search.rows import chunk_rows
from core.store import page_blocks
from core.store.library import BookInfo, Library
from tests.conftest import BOOKS


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, list[BookInfo]]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("rows-home")))
    # an EPUB (pages with their own HTML, packed after each page's text) and a text book
    found = [
        import_book(lib, BOOKS / n).book for n in ("metamorphosis.epub", "alice_in_wonderland.txt")
    ]
    yield lib, found
    lib.close()


def _ids(lib: Library, book_id: int) -> list[int]:
    rows = lib.db.execute_sql("SELECT id FROM chunk WHERE book_id = ? ORDER BY id", (book_id,))
    return [int(r[0]) for r in rows.fetchall()]


def test_passages_read_with_their_blocks_are_the_views_text(
    books: tuple[Library, list[BookInfo]],
) -> None:
    lib, found = books
    view = dict(lib.db.execute_sql("SELECT id, text FROM chunk_text").fetchall())
    for book in found:
        ids = _ids(lib, book.id)
        page_blocks._cache.clear()
        rows = chunk_rows(lib.db, ids, None)
        assert {c: r[5] for c, r in rows.items()} == {c: view[c] for c in ids}
        assert all(r[1] == book.id for r in rows.values())
        # a few passages at a time, in any order, the blocks kept or not
        for start in range(0, len(ids), 7):
            some = ids[start : start + 7][::-1]
            assert {c: r[5] for c, r in chunk_rows(lib.db, some, book.id).items()} == {
                c: view[c] for c in some
            }
    assert chunk_rows(lib.db, _ids(lib, found[0].id)[:3], found[1].id) == {}  # another book's


def test_a_damaged_block_is_told_never_a_wrong_passage(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("rows-damaged")))
    try:
        book = import_book(lib, BOOKS / "alice_in_wonderland.txt").book
        ids = _ids(lib, book.id)
        whole = {c: r[5] for c, r in chunk_rows(lib.db, ids, None).items()}
        first, data = lib.db.execute_sql(
            "SELECT first, data FROM page_block WHERE book_id = ? ORDER BY first LIMIT 1",
            (book.id,),
        ).fetchone()
        in_block = [
            int(r[0])
            for r in lib.db.execute_sql(
                "SELECT c.id FROM chunk c JOIN page p ON p.book_id = c.book_id "
                "AND p.number = c.end_page WHERE c.book_id = ? AND p.block = ?",
                (book.id, first),
            ).fetchall()
        ]
        assert len(in_block) > 3
        cut = bytes(data)[: len(data) // 2]  # the block's stream cut short half way
        lib.db.execute_sql(
            "UPDATE page_block SET data = ? WHERE book_id = ? AND first = ?",
            (cut, book.id, first),
        )
        page_blocks._cache.clear()
        readable = 0
        for chunk_id in in_block:
            try:
                got = chunk_rows(lib.db, [chunk_id], None)
            except (ValueError, zlib.error):
                continue
            assert got[chunk_id][5] == whole[chunk_id]  # a page before the cut, checked
            readable += 1
        assert 0 < readable < len(in_block)  # what is past the cut is told
        flipped = bytearray(data)
        flipped[len(data) // 3] ^= 0x5A
        lib.db.execute_sql(
            "UPDATE page_block SET data = ? WHERE book_id = ? AND first = ?",
            (bytes(flipped), book.id, first),
        )
        page_blocks._cache.clear()
        with pytest.raises((ValueError, zlib.error)):
            chunk_rows(lib.db, in_block, None)
    finally:
        lib.close()
