"""What reading whole chunks in windows costs (core.search.sentence_vectors, issue 24), and how
soon a reader of a long book gets deep search.

- ``cost``: per book of eval_search.py, the encoder's CPU time for one vector per chunk (its
  first 254 word pieces, as before windows), then for the windows computed and stored;
  windows per chunk; the bytes stored and the library file's size (+% for the windows).
- ``latency``: deep search (``search_book(deep=True)``) with the question's vector already
  made (what a search costs beyond it), the one-vector-per-chunk rows of before (kept as
  legacy rows) against the windows, interleaved, median and p95 of 200 searches, on
  Holmes (real windows) and on the 16 MiB EPUB (its windows' rows filled with random
  vectors of the real count: computing them takes most of an hour).
- ``reader``: the 16 MiB EPUB (bench_import.sixteen_mib_epub) with the reader at page 50: the
  seconds from the first question (``want``) until every chunk up to page 50 has its
  windows (the background worker, as in the window), the chunks per second it computes,
  and the whole book's time at that rate (before, nothing was stored until the whole book
  was done).

Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/bench_windows.py [cost] [latency] [reader]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine, median, percentile, report

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch, sentence_vectors
from core.search.encoder import load_encoder, one_blas_thread
from core.search.sentence_vectors import HEAD, OVERLAP, WINDOW, SentenceVectors, pack4
from core.search.vector_indexer import indexer_for, want
from core.search.windows import windows
from core.store.library import Library

QUESTIONS = [
    "What did the hurrying animal take out to check the time?",
    "Who organised the race where everybody won a prize?",
    "Why was the detective's client afraid of the red-haired league?",
    "What did the sister dream about at the end?",
    "How did the insect get back into his room?",
]


def _open(home: Path) -> Library:
    return Library.open(resolve_paths(home))


def _texts(lib: Library, book_id: int) -> tuple[int, list[str]]:
    rows = lib.db.execute_sql(
        "SELECT c.id, t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
        "WHERE c.book_id = ? ORDER BY c.id",
        (book_id,),
    ).fetchall()
    return int(rows[0][0]), [str(r[1]) for r in rows]


def _eval_books(lib: Library) -> dict[str, int]:
    from eval_search import book_path, load

    ids = {}
    for key, relative in load()["books"].items():
        path = book_path(relative)
        if path.exists():
            book = import_book(lib, path).book
            lib.set_read_to(book.id, book.page_count)
            ids[key] = book.id
    indexer_for(lib.db).wait()
    indexer_for(lib.db).stop()
    return ids


def cost(tmp: Path) -> None:
    encoder = load_encoder()
    assert encoder is not None
    lib = _open(tmp / "cost")
    ids = _eval_books(lib)
    size = lambda text: len(encoder.tokenizer.encode(text))  # noqa: E731
    vectors = SentenceVectors(lib.db)
    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    base_bytes = Path(str(lib.db.database)).stat().st_size
    for key, book_id in ids.items():  # interleaved: book by book, before then windows
        _, texts = _texts(lib, book_id)
        windows_n = sum(len(windows(t, size, WINDOW, OVERLAP, head=HEAD)) for t in texts)
        start = time.process_time()
        encoder.encode(texts)
        before = time.process_time() - start
        start = time.process_time()
        assert vectors.index_book(book_id)
        after = time.process_time() - start
        report(
            f"{key}: {len(texts)} chunks, {windows_n} windows",
            f"{before:.1f} s -> {after:.1f} s",
            "(CPU, one vector per chunk -> windows stored)",
            True,
        )
    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    row = lib.db.execute_sql(
        "SELECT sum(length(data)), sum(length(windows)), sum(count) FROM sentence_windows"
    ).fetchone()
    after = Path(str(lib.db.database)).stat().st_size
    report(
        "windows stored (4 bits a number)",
        f"{(row[0] + row[1]) / 1024:.0f} KiB, {(row[0] + row[1]) // row[2]} B/chunk",
        "(database)",
        True,
    )
    report(
        "library file, before -> with the windows",
        f"{base_bytes / 2**20:.1f} -> {after / 2**20:.1f} MiB (+{100 * (after / base_bytes - 1):.0f} %)",
        "(database)",
        True,
    )
    report(
        "one vector per chunk would be",
        f"{row[2] * 192 / 1024:.0f} KiB (+{100 * row[2] * 192 / base_bytes:.0f} %)",
        "(before)",
        True,
    )
    lib.close()


def _legacy_row(lib: Library, book_id: int, first: int, matrix: Any) -> None:
    lib.db.execute_sql(
        "INSERT OR REPLACE INTO sentence_vectors (book_id, model, dims, first_chunk, count, "
        "data) VALUES (?, ?, 384, ?, ?, ?)",
        (book_id, sentence_vectors.MODEL, first, len(matrix), pack4(matrix)),
    )


def _random_rows(n: int, seed: int) -> Any:
    import numpy as np

    return np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)


def latency(tmp: Path) -> None:
    from eval_search import book_path

    from tests.bench.bench_import import sixteen_mib_epub

    encoder = load_encoder()
    assert encoder is not None
    lib = _open(tmp / "latency")
    holmes = import_book(lib, book_path("~/.cache/margin-eval/sherlock_holmes.epub")).book
    big = import_book(lib, sixteen_mib_epub(tmp)).book
    indexer_for(lib.db).wait()
    indexer_for(lib.db).stop()
    vectors = SentenceVectors(lib.db)
    first, texts = _texts(lib, holmes.id)
    assert vectors.index_book(holmes.id)
    legacy = {holmes.id: encoder.encode(texts)}
    first_big, big_texts = _texts(lib, big.id)
    per_chunk = vectors.windows(holmes.id)
    assert per_chunk is not None
    ratio = per_chunk.matrix.shape[0] / per_chunk.count
    made = bytes([2 if random.Random(n).random() < ratio - 1 else 1 for n in range(len(big_texts))])
    lib.db.execute_sql(
        "INSERT OR REPLACE INTO sentence_windows (book_id, model, dims, first_chunk, count, "
        "done, windows, data) VALUES (?, ?, 384, ?, ?, ?, ?, ?)",
        (
            big.id,
            sentence_vectors.LAYOUT,
            first_big,
            len(big_texts),
            len(big_texts),
            made,
            pack4(_random_rows(sum(made), 1)),
        ),
    )
    legacy[big.id] = _random_rows(len(big_texts), 2)
    asked = {q: encoder.encode([q]) for q in QUESTIONS}
    search = BookSearch(lib.db)
    search.sentences._embed = lambda texts: asked[texts[0]]  # type: ignore[method-assign]
    search.sentences.legacy._embed = lambda texts: asked[texts[0]]  # type: ignore[method-assign]
    new_rows = {
        b: lib.db.execute_sql("SELECT * FROM sentence_windows WHERE book_id = ?", (b,)).fetchone()
        for b in (holmes.id, big.id)
    }

    def layout(old: bool) -> None:
        with lib.db.atomic():
            for book_id, row in new_rows.items():
                if old:
                    lib.db.execute_sql("DELETE FROM sentence_windows WHERE book_id = ?", (book_id,))
                    f = first if book_id == holmes.id else first_big
                    _legacy_row(lib, book_id, f, legacy[book_id])
                else:
                    lib.db.execute_sql(
                        "INSERT OR REPLACE INTO sentence_windows VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        row,
                    )

    for book, name in ((holmes, "Holmes"), (big, "16 MiB EPUB")):
        rng = random.Random(7)
        runs = [
            (rng.choice(QUESTIONS), rng.randint(book.page_count // 3, book.page_count))
            for _ in range(200)
        ]
        times: dict[bool, list[float]] = {True: [], False: []}
        part: dict[bool, list[float]] = {True: [], False: []}  # the vectors' part alone
        for n in range(0, len(runs), 25):
            for old in (True, False):
                layout(old)
                search.search_book(book.id, runs[0][0], deep=True)  # its matrix read once
                for query, bound in runs[n : n + 25]:
                    start = time.perf_counter()
                    hits = search.search_book(book.id, query, limit=5, until_page=bound, deep=True)
                    times[old].append((time.perf_counter() - start) * 1000)
                    assert hits is not None
                    rowids = search.chunk_range(book.id, bound)
                    assert rowids is not None
                    start = time.perf_counter()
                    assert search.sentences.cosines(book.id, query, rowids) is not None
                    part[old].append((time.perf_counter() - start) * 1000)
        chunks = len(texts) if book is holmes else len(big_texts)
        windows_n = per_chunk.matrix.shape[0] if book is holmes else sum(made)
        report(
            f"{name} deep search, 1 vector/chunk ({chunks})",
            f"median {median(times[True]):.2f}, p95 {percentile(times[True], 95):.2f} ms",
            "(before)",
            True,
        )
        report(
            f"{name} deep search, windows ({windows_n})",
            f"median {median(times[False]):.2f}, p95 {percentile(times[False], 95):.2f} ms",
            "p95 <= 5 ms",
            percentile(times[False], 95) <= 5,
        )
        report(
            f"{name} the vectors' part alone, before -> windows",
            f"p95 {percentile(part[True], 95):.2f} -> {percentile(part[False], 95):.2f} ms",
            f"(median {median(part[True]):.2f} -> {median(part[False]):.2f})",
            True,
        )
    lib.close()


def reader(tmp: Path) -> None:
    from tests.bench.bench_import import sixteen_mib_epub

    lib = _open(tmp / "reader")
    big = import_book(lib, sixteen_mib_epub(tmp)).book
    indexer_for(lib.db).wait()
    lib.set_read_to(big.id, 50)
    reader_chunks = lib.db.execute_sql(
        "SELECT count(*) FROM chunk WHERE book_id = ? AND end_page <= 50", (big.id,)
    ).fetchone()[0]
    total = lib.db.execute_sql(
        "SELECT count(*) FROM chunk WHERE book_id = ?", (big.id,)
    ).fetchone()[0]
    start = time.perf_counter()
    want(lib.db, big.id)
    search = BookSearch(lib.db)
    rowids = search.chunk_range(big.id, 50)
    assert rowids is not None
    ready = None
    done = 0
    while time.perf_counter() - start < 900:
        row = lib.db.execute_sql(
            "SELECT done FROM sentence_windows WHERE book_id = ?", (big.id,)
        ).fetchone()
        done = int(row[0]) if row else 0
        if ready is None and done >= reader_chunks:
            ready = time.perf_counter() - start
            assert search.sentences.cosines(big.id, QUESTIONS[0], rowids) is not None
        if ready is not None and time.perf_counter() - start > ready + 60:
            break
        time.sleep(0.5)
    took = time.perf_counter() - start
    indexer_for(lib.db).stop(wait=False)
    rate = done / took
    report(
        f"16 MiB EPUB ({total} chunks), reader at page 50",
        f"deep search after {ready:.0f} s" if ready else "not within 900 s",
        f"({reader_chunks} chunks)",
        ready is not None,
    )
    report(
        "background rate, whole book at that rate",
        f"{rate:.1f} chunks/s, {total / rate / 3600:.1f} h",
        "(before: all of it first)",
        True,
    )
    lib.close()


def main() -> None:
    one_blas_thread()
    chosen = [a for a in sys.argv[1:] if a in ("cost", "latency", "reader")] or [
        "cost",
        "latency",
        "reader",
    ]
    print(f"bench_windows on {machine()}: window {WINDOW}, overlap {OVERLAP}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            folder = Path(tmp) / name
            folder.mkdir()
            {"cost": cost, "latency": latency, "reader": reader}[name](folder)


if __name__ == "__main__":
    main()
