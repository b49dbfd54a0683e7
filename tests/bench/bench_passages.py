"""What choosing the answering sentence with the sentence encoder adds to a passages-mode
reply (core/agent/providers/answer_sentence.py): the time of ``choose()`` (the reply's
passages, each around its answering sentences) with the encoder (``deep``) against the
cheap choice (words and static vectors), interleaved question by question, medians and p95.

"cold": the encoder's sentence cache emptied before each question (a question the reader
asks for the first time); "warm": the same question again (cached vectors). The search is
run once per question beforehand (the real ``search_book`` tool, books read to the end, the
static hybrid search: the encoder's chunk vectors are not computed here, they cost minutes).
Run: PYTHONPATH=$PWD:$PWD/tests/bench .venv/bin/python tests/bench/bench_passages.py
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from common import machine
from eval_search import load, open_books

from core.agent.providers import answer_sentence
from core.agent.providers.passages import choose, query_for
from core.agent.tools import ToolContext, default_tools
from core.agent.types import Passage, Question
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.sentence_vectors import DEEP_VECTORS_ENV
from core.store.library import Library


def timed(found: list[Passage], query: str, deep: bool) -> tuple[float, float]:
    """Milliseconds of ``choose()``: (wall clock, this thread's CPU time: what it costs when
    the machine is not shared; the encoder computes on this thread, numpy on one core)."""
    start, cpu = time.perf_counter(), time.thread_time()
    choose(found, query, deep=deep)
    return 1000 * (time.perf_counter() - start), 1000 * (time.thread_time() - cpu)


def line(name: str, values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"  {name:<22} median {statistics.median(values):6.1f} ms, p95 {p95:6.1f} ms"


def main() -> None:
    os.environ.setdefault(DEEP_VECTORS_ENV, "0")  # want() reads it when books are opened
    data = load()
    if answer_sentence._encoder() is None:
        print("no encoder weights (resources/models/minilm-l6-v2): nothing to compare")
        return
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        books = {k: v for k, v in data["books"].items() if not k.endswith("-txt")}
        ids = open_books(lib, books)
        search = BookSearch(lib.db)
        cases = []
        for q in data["questions"]:
            if q["book"] not in ids:
                continue
            book = lib.find_book(ids[q["book"]])
            ctx = ToolContext(lib, search, book, book.spoiler_bound)
            query = query_for(Question(q["question"]))
            out = default_tools().run(ctx, "search_book", {"query": query, "top_k": 8})
            cases.append(([p for p in out.parts if isinstance(p, Passage)], query))
        lib.close()
    rows: dict[str, list[tuple[float, float]]] = {"cheap": [], "cold": [], "warm": []}
    for found, query in cases:
        answer_sentence._cache.clear()
        rows["cheap"].append(timed(found, query, False))
        rows["cold"].append(timed(found, query, True))
        rows["warm"].append(timed(found, query, True))
    rows["added"] = [
        (c[0] - b[0], c[1] - b[1]) for b, c in zip(rows["cheap"], rows["cold"], strict=True)
    ]
    print(f"bench_passages on {machine()}: {len(cases)} questions (wall clock; CPU time)")
    names = {
        "cheap": "cheap choice",
        "cold": "encoder, first time",
        "warm": "encoder, asked again",
        "added": "added (first time)",
    }
    for key, name in names.items():
        print(
            line(name, [w for w, _ in rows[key]]) + ";" + line("", [c for _, c in rows[key]])[25:]
        )


if __name__ == "__main__":
    main()
