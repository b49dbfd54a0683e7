"""The first five passages of every question of the search evaluation set
(tests/bench/data/search_eval.json), BM25 alone and hybrid, by the code at ``--base``
(bench_search.py's ``BASE``, the code before a speed-up) and by this tree, each in a worker
process on the same library (bench_search.run_sides): every answer (passages, pages, scores,
snippets) must be the same; and the library's search (every book, 3 passages each) on each
question. For a change that must not change what search finds (issue 41, search7, search8).
Deep search is not compared: its books' encoder vectors take minutes.
Books kept outside the project are read from MARGIN_EVAL_BOOKS when it names their folder
(eval_search.py's ``book_path``), else skipped, as eval_search.py does.
Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/eval_search_same.py [--base REF]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench_search import BASE, run_sides
from common import machine, report
from eval_search import imported, load

from core.paths import resolve_paths
from core.search.vector_indexer import indexer_for
from core.store.library import Library


def main() -> None:
    data = load()
    print(f"eval_search_same on {machine()}: {len(data['questions'])} questions; old = {BASE}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        lib = Library.open(resolve_paths(home))
        ids = {key: (b.id, b.page_count) for key, b in imported(lib, data["books"]).items()}
        indexer_for(lib.db).wait()  # the static vectors of hybrid search
        runs = [
            (ids[key][0], q["question"], ids[key][1])
            for q in data["questions"]
            for key in (q["book"], q["book"] + "-txt")
            if key in ids
        ]
        # the library's search too, on every question (search8: it re-scores fewer passages)
        questions = list(dict.fromkeys(q["question"] for q in data["questions"]))
        everywhere = [(0, question, 0) for question in questions]
        got = run_sides(home, {"alone": runs, "hybrid": runs, "all": everywhere})
        lib.close()
    for mode, sides in got.items():
        old, new = sides["old"]["found"], sides["new"]["found"]
        same = sum(a == b for a, b in zip(old, new, strict=True))
        report(
            f"{'passages' if mode == 'all' else 'top 5'} the same, old and new ({mode})",
            f"{same} of {len(old)}",
            "all",
            same == len(old),
        )


if __name__ == "__main__":
    main()
