"""Deep search reads whole chunks: each chunk's sentence windows (``core.search.windows``)
cover all of it, a chunk ranks by its best window (blended with their mean), the windows
are computed in reading order (the reader's pages first) and used as they come, the bound
holds, and a library from before windows keeps its old vectors until the new ones are
there."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.books.importer import import_book, reimport_book
from core.paths import resolve_paths
from core.search import BookSearch, sentence_vectors
from core.search.encoder import load_encoder
from core.search.sentence_vectors import (
    HEAD,
    MEAN_WEIGHT,
    OVERLAP,
    WINDOW,
    SentenceVectors,
    mark_ahead,
    pack4,
)
from core.search.vector_indexer import indexer_for, want
from core.search.windows import windows
from core.store.library import BookInfo, Library
from core.store.migrations import MIGRATIONS, SCHEMA_VERSION, _sentence_windows, current_version
from tests.conftest import BOOKS

LAYOUT = sentence_vectors.LAYOUT.rsplit("m", 1)[0] + "m255"  # every window read

pytestmark = [pytest.mark.timeout(400), pytest.mark.deep_vectors]


@pytest.fixture(autouse=True)
def every_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app reads each chunk's head only by default (``sentence_vectors._max_windows``);
    these tests read every window, here and in the worker process (its environment)."""
    monkeypatch.setenv(sentence_vectors.WINDOWS_ENV, "255")
    monkeypatch.setattr(sentence_vectors, "MAX_WINDOWS", 255)
    monkeypatch.setattr(sentence_vectors, "LAYOUT", LAYOUT)
    monkeypatch.setattr(SentenceVectors, "model", LAYOUT)


def _words(text: str) -> list[str]:
    return text.split()


# --- the windows -----------------------------------------------------------------------------

TEXT = (
    "Alice was beginning to get very tired. She had peeped into the book her sister was "
    "reading! It had no pictures or conversations in it? “And what is the use of a book,” "
    "thought Alice, “without pictures?” So she was considering in her own mind. "
    + " ".join(f"word{n}" for n in range(40))
    + ". The end came."
)


@pytest.mark.parametrize(("size", "overlap"), [(12, 0), (12, 6), (30, 10), (1000, 0), (5, 4)])
def test_windows_cover_the_whole_text_in_order(size: int, overlap: int) -> None:
    cut = windows(TEXT, lambda t: len(t.split()), size, overlap)
    assert all(len(w.split()) <= size for w in cut), "no window is longer than the encoder reads"
    # every word is in a window, in order: the windows minus what they repeat of the one
    # before are the text
    joined: list[str] = []
    for window in cut:
        words = window.split()
        repeat = next(
            (n for n in range(min(len(words), len(joined)), 0, -1) if joined[-n:] == words[:n]),
            0,
        )
        assert repeat <= overlap, "a window repeats no more than the overlap"
        assert repeat < len(words), "each window adds something new"
        joined += words[repeat:]
    assert joined == _words(TEXT)
    if size >= len(_words(TEXT)):
        assert cut == [" ".join(_words(TEXT))], "a short text is one window"


@pytest.mark.parametrize(("size", "overlap"), [(12, 0), (12, 6), (30, 10), (5, 4)])
def test_after_the_head_the_windows_cover_the_rest(size: int, overlap: int) -> None:
    count = lambda t: len(t.split())  # noqa: E731
    cut = windows(TEXT, count, size, overlap, head=True)
    assert cut[0].split() == _words(TEXT), "the head: the whole text, read up to size"
    assert all(count(w) <= size for w in cut[1:])
    head = _words(TEXT)[:size]
    rest = windows(TEXT, count, size, overlap)
    # the words past the head are all in the windows after it, in order
    after = [w for window in cut[1:] for w in window.split()]
    tail = _words(TEXT)[len(head) :]
    position = 0
    for word in tail:
        position = after.index(word, position) + 1
    assert len(cut) <= len(rest) + 1
    assert windows("Short. Text.", count, size, overlap, head=True) == ["Short. Text."]


def test_windows_end_at_sentences() -> None:
    cut = windows(TEXT, lambda t: len(t.split()), 20, 0)
    for window in cut[:2]:
        assert re.search(r"[.!?”]$", window), window  # the prose before the long run of words
    assert windows("", len, 10) == [""]


def test_a_long_chunk_is_read_whole_by_the_encoders_tokens() -> None:
    encoder = load_encoder()
    assert encoder is not None
    text = (BOOKS / "alice_in_wonderland.txt").read_text(encoding="utf-8")[20_000:22_600]
    size = lambda t: len(encoder.tokenizer.encode(t))  # noqa: E731
    assert size(text) > WINDOW + 100, "longer than the encoder reads at once"
    cut = windows(text, size, WINDOW, OVERLAP, head=HEAD)
    assert len(cut) >= 2 and all(size(w) <= WINDOW for w in cut[1:])
    if HEAD:  # the first window is the whole chunk, of which the encoder reads the head
        assert cut[0].split() == text.split()
        head = encoder.tokenizer.encode(text, limit=WINDOW)
        assert encoder.tokenizer.encode(cut[1])[0] in head, "the next starts within the head"
    assert cut[-1].split()[-5:] == text.split()[-5:], "its end is read too"


# --- a book's windows in the library ---------------------------------------------------------


def _opening(folder: Path, chars: int) -> Path:
    """The first ``chars`` characters of Alice from chapter I, as a text book."""
    text = (BOOKS / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    start = text.index("\nCHAPTER I.\n")
    path = folder / f"alice-{chars}.txt"
    path.write_text(text[start : text.index("\n\n", start + chars)], encoding="utf-8")
    return path


@pytest.fixture
def opening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Library, BookInfo]]:
    """About 25 chunks of Alice; the background indexer stopped (these tests index); an
    import asks for none of the encoder's vectors (test_vectors_ahead)."""
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, _opening(tmp_path, 30_000)).book
    assert indexer_for(lib.db).wait(60)
    indexer_for(lib.db).stop()
    yield lib, book
    lib.close()


def _row(lib: Library, book_id: int) -> tuple[int, int, str] | None:
    row = lib.db.execute_sql(
        "SELECT done, count, model FROM sentence_windows WHERE book_id = ?", (book_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), str(row[2]))


def test_a_chunk_ranks_by_its_best_window(opening: tuple[Library, BookInfo]) -> None:
    """A question about the end of a long chunk (past what the encoder reads at once) finds
    that chunk nearer than its first 254 word pieces alone would be."""
    lib, book = opening
    vectors = SentenceVectors(lib.db)
    assert vectors.index_book(book.id)
    encoder = load_encoder()
    assert encoder is not None
    search = BookSearch(lib.db)
    rowids = search.chunk_range(book.id)
    assert rowids is not None
    texts = search._rows(list(range(rowids[0], rowids[1] + 1)), book.id)
    size = lambda t: len(encoder.tokenizer.encode(t))  # noqa: E731
    long = [c for c in texts if size(texts[c][5]) > WINDOW + 60]
    assert long, "Alice has chunks longer than the encoder reads at once"
    chunk = long[0]
    tail = windows(texts[chunk][5], size, WINDOW, OVERLAP, head=HEAD)[-1]
    question = tail  # the words of the chunk's last window, which its first 254 never hold
    found = vectors.cosines(book.id, question, rowids)
    assert found is not None
    first, scores = found
    window_vectors = encoder.encode(windows(texts[chunk][5], size, WINDOW, OVERLAP, head=HEAD))
    asked = encoder.encode([question])[0]
    blend = (1 - MEAN_WEIGHT) * (window_vectors @ asked).max() + MEAN_WEIGHT * (
        window_vectors @ asked
    ).mean()
    assert abs(scores[chunk - first] - blend) < 0.03, "the stored windows' blend"
    truncated = float(encoder.encode([texts[chunk][5]])[0] @ asked)
    assert scores[chunk - first] > truncated, "its last window is read"
    assert int(np.argmax(scores)) + first == chunk
    # the per-chunk vectors other readers use (spoiler checks) are there too, unit rows
    stored = vectors._stored(book.id)
    assert stored is not None and stored.count == rowids[1] - rowids[0] + 1
    assert np.allclose(np.linalg.norm(stored.matrix, axis=1), 1, atol=1e-4)
    if HEAD:  # the very vectors of before windows (their thresholds were chosen on them)
        before = encoder.encode([texts[chunk][5]])[0]
        assert float(stored.matrix[chunk - first] @ before) > 0.98


def test_the_readers_pages_come_first_and_are_searched_at_once(
    opening: tuple[Library, BookInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    lib, book = opening
    monkeypatch.setattr(sentence_vectors, "AHEAD_PAGES", 1)
    lib.set_read_to(book.id, 3)
    vectors = SentenceVectors(lib.db)
    search = BookSearch(lib.db)
    total = lib.db.execute_sql(
        "SELECT count(*) FROM chunk WHERE book_id = ?", (book.id,)
    ).fetchone()[0]
    reader = lib.db.execute_sql(
        "SELECT count(*) FROM chunk WHERE book_id = ? AND start_page <= 4", (book.id,)
    ).fetchone()[0]
    assert 0 < reader < total // 2
    assert vectors.index_book(book.id, reader_first=True)
    assert _row(lib, book.id) == (reader, total, LAYOUT), "the reader's chunks, and no more"
    assert vectors.missing() == [] or book.id not in vectors.missing()  # not wanted yet
    # asked for when the book opens (``want_ahead``): the reader's part is there, none missing
    # until the reader reads on past half of the pages computed ahead
    assert mark_ahead(lib.db, book.id)
    assert book.id not in vectors.missing()
    lib.set_read_to(book.id, 4)
    assert book.id not in vectors.missing(), "no worker for every page turned"
    lib.set_read_to(book.id, 6)
    assert vectors.missing() == [book.id] and vectors.reader_only([book.id]) == [book.id]
    lib.set_read_to(book.id, 3)
    want(lib.db, book.id)
    indexer_for(lib.db).stop()
    assert vectors.missing() == [book.id], "not all there: asked for again"
    assert vectors.reader_only([book.id]) == [], "the whole book, now"
    assert not vectors.has(book.id)

    question = "What did the hurrying animal take out to check the time?"
    bounded = search.chunk_range(book.id, 3)
    assert bounded is not None
    found = vectors.cosines(book.id, question, bounded)
    assert found is not None and np.all(found[1] != 0), "within the bound: every chunk's"
    deep = search.search_book(book.id, question, limit=5, until_page=3, deep=True)
    assert deep and all(h.end_page <= 3 for h in deep), "the bound holds"
    assert any("waistcoat-pocket" in h.text for h in deep)

    # past the bound: chunks without windows yet are ranked by their words alone
    whole = search.chunk_range(book.id)
    assert whole is not None
    found = vectors.cosines(book.id, question, whole)
    assert found is not None
    assert np.all(found[1][reader:] == 0) and np.any(found[1][:reader] != 0)
    later = "Who organised the race where everybody won a prize?"  # the Dodo, chapter III
    hits = search.search_book(book.id, later, limit=5, deep=True)
    assert any(h.chunk_id >= whole[0] + reader and "Dodo" in h.text for h in hits), (
        "a chunk without windows yet is found by its words"
    )

    # then the rest, in order, and the book is done
    assert vectors.index_book(book.id)
    assert _row(lib, book.id) == (total, total, LAYOUT)
    assert vectors.has(book.id) and vectors.missing() == []
    found = vectors.cosines(book.id, question, whole)
    assert found is not None and np.all(found[1][:-1] != 0)


def test_windows_survive_a_reimport_and_stale_ones_are_computed_again(
    opening: tuple[Library, BookInfo],
) -> None:
    lib, book = opening
    vectors = SentenceVectors(lib.db)
    search = BookSearch(lib.db)
    question = "What did the hurrying animal take out to check the time?"
    assert vectors.index_book(book.id)
    first = _row(lib, book.id)
    reimport_book(lib, book.id)
    indexer_for(lib.db).stop()
    want(lib.db, book.id)
    indexer_for(lib.db).stop()
    rowids = search.chunk_range(book.id)
    assert rowids is not None
    assert _row(lib, book.id) == first and vectors.has(book.id) and vectors.missing() == []
    assert vectors.cosines(book.id, question, rowids) is not None
    # windows of other chunks (a book read again into new chunk ids) are never used
    lib.db.execute_sql("UPDATE sentence_windows SET first_chunk = first_chunk + 1000")
    assert vectors.missing() == [book.id] and not vectors.has(book.id)
    assert vectors.cosines(book.id, question, rowids) is None
    assert search.search_book(book.id, question, deep=True), "searches meanwhile"
    assert vectors.index_book(book.id)
    assert _row(lib, book.id) == first and vectors.has(book.id)
    lib.delete_book(book.id)
    assert _row(lib, book.id) is None


def test_an_old_library_keeps_its_vectors_until_the_windows_are_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library from before windows: one vector per chunk in ``sentence_vectors``. After the
    migration deep search still uses them; once the windows are computed they replace them."""
    home = tmp_path / "home"
    lib = Library.open(resolve_paths(home))
    book = import_book(lib, _opening(tmp_path, 8_000)).book
    indexer_for(lib.db).stop()
    encoder = load_encoder()
    assert encoder is not None
    first, count = lib.db.execute_sql(
        "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book.id,)
    ).fetchone()
    search = BookSearch(lib.db)
    texts = search._rows(list(range(first, first + count)), book.id)
    old = pack4(encoder.encode([texts[c][5] for c in range(first, first + count)]))
    lib.db.execute_sql(
        "INSERT INTO sentence_vectors (book_id, model, dims, first_chunk, count, data) "
        "VALUES (?, 'all-MiniLM-L6-v2', 384, ?, ?, ?)",
        (book.id, first, count, old),
    )
    lib.db.execute_sql("DROP TABLE sentence_windows")
    before = MIGRATIONS.index(_sentence_windows)  # later helpers' migrations run too
    lib.db.execute_sql(f"PRAGMA user_version = {before}")
    lib.close()

    lib = Library.open(resolve_paths(home))
    indexer_for(lib.db).stop()
    assert current_version(lib.db) == SCHEMA_VERSION
    search = BookSearch(lib.db)
    vectors = search.sentences
    rowids = search.chunk_range(book.id)
    assert rowids is not None and _row(lib, book.id) is None
    question = "What did the hurrying animal take out to check the time?"
    legacy = vectors.cosines(book.id, question, rowids)
    assert legacy is not None, "the old vectors serve deep search meanwhile"
    kept = vectors._stored(book.id)
    assert kept is not None and kept.count == count, "and the spoiler checks' chunks"
    deep = search.search_book(book.id, question, limit=5, deep=True)
    assert any("waistcoat-pocket" in h.text for h in deep)
    want(lib.db, book.id)
    indexer_for(lib.db).stop()
    assert vectors.missing() == [book.id]
    # the reader's pages first: the old vectors still serve the whole book meanwhile
    monkeypatch.setattr(sentence_vectors, "AHEAD_PAGES", 0)
    lib.set_read_to(book.id, 1)
    assert vectors.index_book(book.id, reader_first=True)
    partial = _row(lib, book.id)
    assert partial is not None and 0 < partial[0] < partial[1]
    meanwhile = vectors.cosines(book.id, question, rowids)
    assert meanwhile is not None and np.allclose(meanwhile[1], legacy[1])
    assert vectors.index_book(book.id)
    assert vectors.has(book.id)
    gone = lib.db.execute_sql(
        "SELECT count(*) FROM sentence_vectors WHERE book_id = ?", (book.id,)
    ).fetchone()[0]
    assert gone == 0, "the old row goes once the windows are all there"
    new = vectors.cosines(book.id, question, rowids)
    assert new is not None and new[1].shape == legacy[1].shape
    lib.close()


def test_the_worker_does_every_readers_pages_before_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two books asked for: the worker computes the chunks up to each reader's page first
    (both books), then the rest of each, and reports each book once, when it is done."""
    from core.search import vector_worker

    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        books = [import_book(lib, _opening(tmp_path, n)).book for n in (9_000, 12_000)]
        indexer_for(lib.db).stop()
        for book in books:
            lib.set_read_to(book.id, 2)
        monkeypatch.setattr(sentence_vectors, "AHEAD_PAGES", 0)
        writes: list[tuple[int, int, int]] = []
        real = SentenceVectors._write

        def record(self, book_id, first, count, done, counts, data):
            writes.append((book_id, done, count))
            return real(self, book_id, first, count, done, counts, data)

        monkeypatch.setattr(SentenceVectors, "_write", record)
        reports: list[tuple[int, str]] = []
        path = str(lib.db.database)
        vector_worker.index_books(path, [b.id for b in books], reports.append, "sentence")
        assert reports == [(b.id, "ok") for b in books]
        a, b = (book.id for book in books)
        assert [w[0] for w in writes[:2]] == [a, b], "each reader's pages first"
        assert all(done < count for _, done, count in writes[:2])
        rest = [w[0] for w in writes[2:]]
        assert rest == sorted(rest, key=lambda book_id: book_id != a), "then the rest, in turn"
        assert writes[-1][0] == b and writes[-1][1] == writes[-1][2]
        for book in books:
            done = _row(lib, book.id)
            assert done is not None and done[0] == done[1]
    finally:
        lib.close()


def test_a_book_asked_about_meanwhile_does_not_wait_for_a_long_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is busy with the rest of a long book when a question on another book comes:
    the other book's reader's pages get their windows long before the long book is done
    (the long book's stored chunks stay; it goes on afterwards). The imports ask for none."""
    import time

    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        long = import_book(lib, BOOKS / "alice_in_wonderland.txt").book
        short = import_book(lib, _opening(tmp_path, 9_000)).book
        indexer = indexer_for(lib.db)
        assert indexer.wait(120)
        lib.set_read_to(long.id, 1)
        lib.set_read_to(short.id, 1)
        want(lib.db, long.id)
        deadline = time.monotonic() + 300
        while (_row(lib, long.id) or (0, 0, ""))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        asked = _row(lib, long.id)
        assert asked is not None, "the long book's first pages are stored"
        want(lib.db, short.id)
        while _row(lib, short.id) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        busy = _row(lib, long.id)
        assert busy is not None and busy[0] < busy[1], "the short book did not wait"
        # not even for the rest of the long book's reader's part (about 120 chunks): the
        # book asked for last comes first (a batch of the long one may be stored before the
        # worker is told, and one after, before this loop looks again under load)
        assert busy[0] <= asked[0] + 2 * sentence_vectors.BATCH, (asked, busy)
        # then the long book goes on where it was, the short one done (the rest of the long
        # book is not waited for: it is minutes of encoding under load, and proves nothing more)
        while (_row(lib, long.id) or busy)[0] <= busy[0] and time.monotonic() < deadline:
            time.sleep(0.2)
        went_on = _row(lib, long.id)
        assert went_on is not None and went_on[0] > busy[0], "the long book goes on afterwards"
        row = _row(lib, short.id)
        assert row is not None and row[0] == row[1], "the short book was done first"
    finally:
        indexer_for(lib.db).stop(wait=False)  # its worker ends now, not after the whole book
        lib.close()
