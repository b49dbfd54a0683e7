"""The search index and the file when books are read again and deleted (issue 27, item 11):
a library of the fixture books and the 16 MiB-of-XHTML EPUB; the big book is re-read, then
deleted. After each step: the index's bytes, the file (checkpointed, not vacuumed), its free
pages, and how long the step took. Code at git REF vs the working tree, each round in fresh
processes, alternating; medians.
Run: .venv/bin/python tests/bench/bench_index_churn.py [REF]   (default: 874d290, before the
index was merged after removals)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 3
STEPS = ("imported", "re-read", "deleted")


def worker(root: Path, big: Path, books: list[Path]) -> None:
    sys.path.insert(0, str(root))
    import core.books.importer as importer
    from core.paths import resolve_paths
    from core.store.library import Library

    importer.request_vectors = lambda db: None  # the same work on both sides, nothing after
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as home:
        lib = Library.open(resolve_paths(home))
        db = lib.db

        def after(step: str, start: float) -> None:
            seconds = time.perf_counter() - start
            db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            index = db.execute_sql("SELECT sum(length(block)) FROM chunk_index_data").fetchone()
            free = db.execute_sql("PRAGMA freelist_count").fetchone()[0]
            size = lib.paths.database.stat().st_size
            out[step] = {"seconds": seconds, "index": index[0], "size": size, "free": free}

        start = time.perf_counter()
        for path in books:
            importer.import_book(lib, path)
        book = importer.import_book(lib, big).book
        after("imported", start)
        start = time.perf_counter()
        importer.reimport_book(lib, book.id)
        after("re-read", start)
        start = time.perf_counter()
        lib.delete_book(book.id)
        after("deleted", start)
        lib.close()
    print(json.dumps(out))


def main(ref: str) -> None:
    from common import FIXTURES, ROOT, base_tree, machine, median, run_worker, sixteen_mib_epub

    print(f"bench_index_churn on {machine()}; {ref} vs working tree, {ROUNDS} rounds")
    books = [FIXTURES / "books" / n for n in ("alice_in_wonderland.epub", "metamorphosis.txt")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = base_tree(ref, folder)
        big = sixteen_mib_epub(folder)
        runs: dict[str, list[dict[str, Any]]] = {"base": [], "now": []}
        for _ in range(ROUNDS):
            for side, root in (("base", old), ("now", ROOT)):
                runs[side].append(run_worker(__file__, root, [big, *books]))
        for step in STEPS:
            for side in ("base", "now"):
                fig = {k: median([r[step][k] for r in runs[side]]) for k in runs[side][0][step]}
                print(
                    f"  {step:9} {side:4}: index {fig['index'] / 1e6:6.2f} MB, file"
                    f" {fig['size'] / 1e6:6.2f} MB ({fig['free']:.0f} free pages),"
                    f" {fig['seconds'] * 1000:6.0f} ms"
                )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), Path(sys.argv[3]), [Path(p) for p in sys.argv[4:]])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "874d290")
