"""Deep search's vectors of the reader's part of a book are asked for when it is opened
(``vector_indexer.want_ahead``, issue 41: the window asks right after a reader's own import),
the rest only once a question comes; an import alone asks for none."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import sentence_vectors, vector_indexer
from core.search.sentence_vectors import SentenceVectors, is_wanted
from core.search.vector_indexer import indexer_for, want, want_ahead
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
def test_opening_asks_for_the_readers_part_and_an_import_alone_for_none(
    tmp_path: Path, requested: list[object]
) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, _book(tmp_path)).book
        vectors = SentenceVectors(lib.db)
        assert requested, "the indexer was woken (the static vectors)"
        assert vectors.missing() == [], "a book only imported (a synced library) waits"
        want_ahead(lib.db, book.id)  # the book is opened
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


@pytest.mark.deep_vectors
def test_a_reader_far_into_the_book_gets_the_pages_ahead_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's part in the middle of the book comes first (issue 41): the chunks
    before it have no windows yet (0 of them), are searched by their words alone, and come
    next; then the rest, and the book is complete."""
    lib = Library.open(resolve_paths(tmp_path / "home"))
    text = (BOOKS / "alice_in_wonderland.txt").read_text()
    start = text.index("\nCHAPTER I.\n")  # after the contents
    path = tmp_path / "alice-opening.txt"
    path.write_text(text[start : start + 24_000], encoding="utf-8")
    book = import_book(lib, path).book
    indexer_for(lib.db).stop()
    monkeypatch.setattr(sentence_vectors, "AHEAD_PAGES", 1)
    monkeypatch.setattr(sentence_vectors, "BEHIND_PAGES", 0)
    lib.set_read_to(book.id, 6)
    vectors = SentenceVectors(lib.db)
    ids = lib.db.execute_sql(
        "SELECT id, start_page, end_page FROM chunk WHERE book_id = ? ORDER BY id", (book.id,)
    ).fetchall()
    first = ids[0][0]
    low = next(i for i, (_, _, end) in enumerate(ids) if end > 6)
    high = max(i for i, (_, start, _) in enumerate(ids) if start <= 7) + 1
    assert 0 < low < high < len(ids)
    assert vectors.index_book(book.id, reader_first=True)
    made = bytes(
        lib.db.execute_sql(
            "SELECT windows FROM sentence_windows WHERE book_id = ?", (book.id,)
        ).fetchone()[0]
    )
    assert len(made) == high and not any(made[:low]) and all(made[low:high])
    assert not vectors.has(book.id) and vectors._stored(book.id) is None
    question = "What did the hurrying animal take out to check the time?"
    found = vectors.cosines(book.id, question, (first, first + high - 1))
    assert found is not None
    assert np.all(found[1][:low] == 0) and np.all(found[1][low:] != 0)
    want(lib.db, book.id)
    indexer_for(lib.db).stop()
    assert vectors.missing() == [book.id], "the chunks left out are missing"
    assert vectors.index_book(book.id)
    row = lib.db.execute_sql(
        "SELECT done, count FROM sentence_windows WHERE book_id = ?", (book.id,)
    ).fetchone()
    assert tuple(row) == (len(ids), len(ids))
    assert vectors.has(book.id) and vectors.missing() == []
    found = vectors.cosines(book.id, question, (first, ids[-1][0]))
    assert found is not None and np.all(found[1][:-1] != 0)
    stored = vectors._stored(book.id)
    assert stored is not None and stored.matrix.shape[0] == len(ids)
    lib.close()


@pytest.mark.deep_vectors
def test_a_book_the_window_opens_has_its_worker_started_while_it_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``import_book(opens=True)``, the window's import of a book it opens next (issue 41):
    the vectors worker starts before the book is stored (its models load meanwhile, and it
    encodes the reader's part from the moment the book is stored), and that same worker
    does the round after the import."""
    started: list[int] = []
    real = vector_indexer.PythonWorker

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            started.append(self.pid)

    monkeypatch.setattr(vector_indexer, "PythonWorker", Counted)
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        indexer = indexer_for(lib.db)
        warm: list[bool] = []
        store = lib.add_book

        def add_book(**kwargs: object) -> int:
            warm.append(indexer._warm is not None and indexer._warm.is_alive())
            return store(**kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(lib, "add_book", add_book)
        # the window opens it (``want_ahead``) a moment after the import: asked for ahead
        # here (a new library's first book is number 1), so that the round after the import
        # is sure to hold it, however loaded the machine
        sentence_vectors.mark_ahead(lib.db, 1)
        book = import_book(lib, _book(tmp_path), opens=True).book
        assert book.id == 1
        want_ahead(lib.db, book.id)
        assert indexer.wait(120)
        assert warm == [True], "the worker was started before the book was stored"
        assert len(started) == 1, "the worker started ahead did the work"
        vectors = SentenceVectors(lib.db)
        assert vectors.missing() == [] and vectors.windows(book.id) is not None
    finally:
        lib.close()


@pytest.mark.deep_vectors
def test_a_failed_import_ends_the_worker_started_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        indexer = indexer_for(lib.db)
        workers: list[object] = []

        def add_book(**kwargs: object) -> int:
            workers.append(indexer._warm)
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(lib, "add_book", add_book)
        with pytest.raises(Exception, match="space"):
            import_book(lib, _book(tmp_path), opens=True)
        assert len(workers) == 1 and isinstance(workers[0], vector_indexer.PythonWorker)
        assert indexer._warm is None and not workers[0].is_alive()
    finally:
        lib.close()


def test_the_pages_encoded_ahead_are_not_encoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the worker: the chunks encoded ahead (``{"warm": texts}``, from the moment the
    book is stored) give the reader's part its windows with no further encoding."""
    from core.search import vector_worker
    from core.search.encoder import load_encoder

    monkeypatch.setenv(sentence_vectors.DEEP_VECTORS_ENV, "1")
    encoder = load_encoder()
    if encoder is None:
        pytest.skip("no sentence encoder weights")
    lib = Library.open(resolve_paths(tmp_path / "home"))
    lib.db.margin_no_background = True  # type: ignore[attr-defined]
    try:
        book = import_book(lib, _book(tmp_path)).book
        rows = lib.db.execute_sql(
            "SELECT t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
            "WHERE c.book_id = ? ORDER BY c.id",
            (book.id,),
        ).fetchall()
        texts = [str(r[0]) for r in rows]  # (the book's first 60 pages: all of it)
        monkeypatch.setattr(vector_worker, "_widen", lambda kind: None)
        monkeypatch.setattr(encoder, "memo", {})
        forwards: list[int] = []
        real = encoder._forward
        monkeypatch.setattr(encoder, "_forward", lambda b: forwards.append(len(b)) or real(b))
        job = {"kind": "sentence", "books": [book.id], "reader_only": [book.id]}
        sent: list[object] = []
        early: list[int] = []

        def jobs() -> Iterator[dict[str, object]]:
            yield {"warm": texts}  # the book being stored: its models load, nothing is encoded
            time.sleep(0.5)
            early.append(sum(forwards))
            yield {"go": True}  # it is stored
            yield {"jobs": [job]}  # the window opened it

        assert vector_worker.run_jobs(str(lib.db.database), jobs(), sent.append)
        assert early == [0], "nothing encoded while the book is stored (the import's cores)"
        from core.search.frontmatter import is_front_matter

        read = [t for t in texts if not is_front_matter(t)]  # (front matter: zeros, unread)
        assert 0 < len(read) < len(texts)
        assert sum(forwards) == len(read), "each chunk encoded once, ahead"
        assert sent == [["done", "sentence", book.id, "ok"]]
        stored = SentenceVectors(lib.db).windows(book.id)
        assert stored is not None
        for n, text in enumerate(texts):  # front matter's windows are zeros: never near
            rows = stored.matrix[stored.starts[n] : stored.starts[n + 1]]
            assert len(rows) and bool(np.any(rows)) != is_front_matter(text), n
    finally:
        lib.close()
