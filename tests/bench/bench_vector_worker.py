"""Where the background vectors worker's time goes after a big import (issue 41's "deep-search
vectors for the 60 pages after read_to ≤ 20 s", issue 27's "no worker left 10 s after an
import"): the 16 MiB EPUB of bench_memory (9,380 pages, 18,760 chunks) imported once, then in
fresh processes, as the worker runs them (``core.search.vector_worker``), each phase timed,
wall and CPU:

- start: an empty worker started and ended (``PythonWorker``: the interpreter, its imports);
- the imports the work adds (numpy, the vectors' modules, the encoder's);
- the static vectors of every chunk (``vectors.BookVectors.index_book``): reading the chunks,
  the model's load, the embedding, the front-matter test, packing, the write;
- the sentence encoder's load (widened as the worker does: float32 matrices, batches on
  ``ENCODER_THREADS`` threads), then the reader's part (``sentence_vectors.AHEAD_PAGES`` past
  ``read_to`` = 0: the chunks of the first 60 pages): reading, cutting into windows, the
  encoding, packing, the write (``SentenceVectors.index_book(reader_first=True)``, timed
  whole too).

The worker runs these at nice 10 (``core.processes``); here they run at the bench's own
priority, so the figures are the work's, not the machine's other load's.

Run: .venv/bin/python tests/bench/bench_vector_worker.py [--rounds 3]
Smoke (MARGIN_BENCH_SMOKE=1): one round on a 12-chapter EPUB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMOKE = os.environ.get("MARGIN_BENCH_SMOKE") == "1"


def _timed(figures: dict[str, list[float]], name: str, started: tuple[float, float]) -> None:
    figures[name] = [time.perf_counter() - started[0], time.process_time() - started[1]]


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def child(root: str, library: str) -> None:
    """In a fresh process: each phase once; one JSON line of {phase: [wall, cpu]}."""
    sys.path.insert(0, root)
    figures: dict[str, list[float]] = {}
    t = _now()
    import numpy as np
    import peewee as pw

    from core.search import embedding, encoder
    from core.search.frontmatter import is_front_matter
    from core.search.sentence_vectors import (
        HEAD,
        MAX_WINDOWS,
        OVERLAP,
        WINDOW,
        SentenceVectors,
        pack4,
    )
    from core.search.vector_worker import ENCODER_THREADS, index_in_worker  # its imports
    from core.search.vectors import BookVectors
    from core.search.windows import windows
    from core.store.db import PRAGMAS
    from core.store.models import page_text, unpack_chunk
    from core.store.page_blocks import margin_page

    assert index_in_worker

    _timed(figures, "imports the work adds", t)
    db = pw.SqliteDatabase(library, pragmas=PRAGMAS)
    db.register_function(page_text, "margin_text", 1, deterministic=True)
    db.register_function(unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    db.connect()
    book_id = int(db.execute_sql("SELECT min(id) FROM book").fetchone()[0])
    static = BookVectors(db)
    t = _now()
    ids, texts = static._chunks(book_id)
    _timed(figures, "static: read the chunks", t)
    t = _now()
    embedding._load_model()
    embedding.widen()  # as the worker does (float32 token vectors)
    _timed(figures, "static: load the model", t)
    t = _now()
    matrix = embedding.embed(texts)
    _timed(figures, "static: embed", t)
    t = _now()
    front = [is_front_matter(text) for text in texts]
    _timed(figures, "static: front-matter test", t)
    t = _now()
    embedding.pack(matrix)
    _timed(figures, "static: pack", t)
    db.execute_sql("DELETE FROM chunk_vectors")
    t = _now()
    static.index_book(book_id)
    _timed(figures, "static: index_book, whole", t)
    t = _now()
    model = encoder.load_encoder()
    assert model is not None, "no sentence encoder (make .venv/.installed fetches it)"
    model.widen(ENCODER_THREADS)  # as the worker does (float32 matrices, two threads)
    _timed(figures, "encoder: load", t)
    deep = SentenceVectors(db)
    low, high = deep._reader_span(book_id, ids[0], len(ids))
    t = _now()
    ahead = deep._texts(book_id, ids[0] + low, ids[0] + high - 1)
    _timed(figures, f"60 pages ({high - low} chunks): read", t)
    t = _now()
    size = lambda text: len(model.tokenizer.encode(text))  # noqa: E731
    cuts = [windows(x, size, WINDOW, OVERLAP, head=HEAD)[:MAX_WINDOWS] for x in ahead]
    _timed(figures, "60 pages: cut into windows", t)
    t = _now()
    vectors = model.encode([w for cut in cuts for w in cut])
    _timed(figures, "60 pages: encode", t)
    t = _now()
    pack4(np.asarray(vectors))
    _timed(figures, "60 pages: pack", t)
    db.execute_sql("DELETE FROM sentence_windows")
    t = _now()
    deep.index_book(book_id, reader_first=True)
    _timed(figures, "60 pages: index_book, whole", t)
    figures["front-matter chunks"] = [float(sum(front)), 0.0]
    print(json.dumps(figures), flush=True)


def worker_start() -> list[float]:
    """An empty job: the worker process started, its imports, its end."""
    from core.processes import PythonWorker
    from core.search.vector_worker import FLAG

    started = time.perf_counter()
    worker = PythonWorker("core.search.vector_worker", FLAG, {"path": "", "jobs": []})
    worker.join(30)
    return [time.perf_counter() - started, float("nan")]


def main() -> None:
    from common import ROOT, machine, median

    rounds = (
        1
        if SMOKE
        else int(sys.argv[sys.argv.index("--rounds") + 1])
        if "--rounds" in sys.argv
        else 3
    )
    print(f"bench_vector_worker on {machine()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        source = work / "source"
        source.mkdir()
        if SMOKE:
            from tests.core.books.epubgen import make_epub

            book = make_epub(
                source / "small.epub", [(f"C{n}", "<p>Words here.</p>" * 40) for n in range(12)]
            )
        else:
            from common import sixteen_mib_epub

            book = sixteen_mib_epub(source)
        from core.books.importer import import_book
        from core.paths import resolve_paths
        from core.store.library import Library

        library = Library.open(resolve_paths(work / "home").ensure())
        library.db.margin_no_background = True  # type: ignore[attr-defined]
        import_book(library, book)
        path = str(library.db.database)
        library.close()
        runs: list[dict[str, list[float]]] = []
        for _ in range(rounds):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(ROOT), path],
                capture_output=True, text=True, cwd=ROOT,
            )  # fmt: skip
            assert out.returncode == 0, out.stderr[-3000:]
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            figures = {"worker start and end (empty job)": worker_start(), **figures}
            runs.append(figures)
    print(f"  {'phase':<44} {'wall s':>8} {'CPU s':>8}   (median of {rounds})")
    for name in runs[0]:
        wall = median([r[name][0] for r in runs])
        cpu = median([r[name][1] for r in runs])
        print(f"  {name:<44} {wall:8.2f} {cpu:8.2f}")
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
