"""Deep search's vectors of the reader's part of a book are asked for at its import
(``vector_indexer.want_ahead``, issue 41), the rest only once a question comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import vector_indexer
from core.search.sentence_vectors import SentenceVectors, is_wanted
from core.store.library import Library
from tests.conftest import BOOKS


def _book(folder: Path) -> Path:
    path = folder / "alice-start.txt"
    path.write_text((BOOKS / "alice_in_wonderland.txt").read_text()[:9000], encoding="utf-8")
    return path


@pytest.fixture
def requested(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The background indexer's wake-ups, recorded (none started: nothing is computed)."""
    calls: list[object] = []
    monkeypatch.setattr(vector_indexer, "request_vectors", calls.append)
    return calls


@pytest.mark.deep_vectors
def test_an_import_asks_for_the_readers_part_at_once(
    tmp_path: Path, requested: list[object]
) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, _book(tmp_path)).book
        vectors = SentenceVectors(lib.db)
        assert requested, "the indexer was woken"
        assert vectors.missing() == [book.id]
        assert vectors.reader_only([book.id]) == [book.id], "the reader's part, not the book"
        assert not is_wanted(lib.db, book.id), "the whole book waits for a question"
    finally:
        lib.close()


@pytest.mark.deep_vectors
def test_a_short_command_asks_for_nothing(tmp_path: Path, requested: list[object]) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    lib.db.margin_no_background = True  # type: ignore[attr-defined]  (as `margin import`)
    try:
        import_book(lib, _book(tmp_path))
        assert requested == [] and SentenceVectors(lib.db).missing() == []
    finally:
        lib.close()


def test_with_deep_vectors_off_an_import_asks_for_none(
    tmp_path: Path, requested: list[object]
) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))  # MARGIN_DEEP_VECTORS=0 (conftest)
    try:
        import_book(lib, _book(tmp_path))
        assert SentenceVectors(lib.db).missing() == []
    finally:
        lib.close()
