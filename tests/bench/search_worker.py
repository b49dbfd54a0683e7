"""One side of bench_search.py's old-against-new run: the code of the tree given (``TREE``)
searching the library at ``HOME``. Reads jobs from stdin, one JSON line each ({"mode":
"alone" | "hybrid" | "all", "runs": [[book id, query, page bound], ...]}), and answers each
with one JSON line: wall and CPU milliseconds per query and what each query found (passages
with their pages, scores and snippets), so that the two sides' answers can be compared.
Run by bench_search.py: python search_worker.py TREE HOME
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, sys.argv[1])  # the tree's own ``core``, before any installed one

from core.paths import resolve_paths
from core.search import BookSearch
from core.store.library import Library


def _hits(hits: list[Any]) -> list[Any]:
    return [[h.chunk_id, h.start_page, h.end_page, h.score, h.snippet] for h in hits]


def main() -> None:
    lib = Library.open(resolve_paths(Path(sys.argv[2])))
    search = BookSearch(lib.db)

    def answer(mode: str, book_id: int, query: str, bound: int) -> Any:
        if mode == "all":
            found = search.search_all(query, per_book=3)
            return [[book, _hits(hits)] for book, hits in found]
        hybrid = mode == "hybrid"
        return _hits(search.search_book(book_id, query, limit=5, until_page=bound, hybrid=hybrid))

    for line in sys.stdin:
        job = json.loads(line)
        wall: list[float] = []
        cpu: list[float] = []
        found = []
        for book_id, query, bound in job["runs"]:
            started, started_cpu = time.perf_counter(), time.process_time()
            got = answer(job["mode"], book_id, query, bound)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            found.append(got)
        print(json.dumps({"wall": wall, "cpu": cpu, "found": found}), flush=True)
    lib.close()


if __name__ == "__main__":
    main()
