"""How long passages mode (no model) takes to choose each passage's answering sentence: the
settings before issue 41 against today's, interleaved question by question, CPU time beside
wall time (issue 41: a reply at most 100 ms of CPU).

A reply's time is almost all ``choose()`` (core/agent/providers/passages.py): the sentence
encoder reading candidate sentences. Before: up to 24 sentences (4, 4 and 1 per passage
with their neighbours, chosen by their telling words) read up to 36 word pieces each. The
encoder's sentence cache is emptied before each question (a question asked the first
time). The search runs once per question beforehand (the real ``search_book`` tool, books
read to the end); quality is judged by tests/bench/eval_passages.py.
Run: PYTHONPATH=$PWD:$PWD/tests/bench .venv/bin/python tests/bench/bench_passages_speed.py
Smoke: MARGIN_BENCH_SMOKE=1 (one book, two questions, one round).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from common import SMOKE, machine, median, report, rounds
from eval_search import load, open_books

from core.agent.providers import answer_sentence
from core.agent.providers.passages import choose, query_for
from core.agent.tools import ToolContext, default_tools
from core.agent.types import Passage, Question
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.sentence_vectors import DEEP_VECTORS_ENV
from core.store.library import Library

BEFORE = {"BUDGET": 24, "CANDIDATES": (4, 4, 1), "ENCODED_TOKENS": 36, "PRESELECT": "words"}
NOW = {name: getattr(answer_sentence, name) for name in BEFORE}
# a lighter choice measured for issue 41 (6 sentences chosen by the cheap score, 28 word
# pieces): about 4× less CPU, but the answer in the bold sentence 25.8 % of eval_passages'
# alice and metamorphosis questions instead of 30.3 % (no deep vectors): not the default
LIGHT = {"BUDGET": 6, "CANDIDATES": (2, 1, 0), "ENCODED_TOKENS": 28, "PRESELECT": "cheap"}


def timed(found: list[Passage], query: str, settings: dict[str, object]) -> tuple[float, float]:
    """(wall ms, this thread's CPU ms) of ``choose()`` with ``settings``, asked the first time."""
    for name, value in settings.items():
        setattr(answer_sentence, name, value)
    answer_sentence._cache.clear()
    answer_sentence.stems.cache_clear()
    start, cpu = time.perf_counter(), time.thread_time()
    choose(found, query)
    return 1000 * (time.perf_counter() - start), 1000 * (time.thread_time() - cpu)


def main() -> None:
    os.environ.setdefault(DEEP_VECTORS_ENV, "0")  # want() reads it when books are opened
    if answer_sentence._encoder() is None:
        print("no encoder weights (resources/models/minilm-l6-v2): nothing to compare")
        return
    data = load()
    keep = ("metamorphosis",) if SMOKE else ("alice", "metamorphosis")
    books = {k: v for k, v in data["books"].items() if k in keep}
    questions = [q for q in data["questions"] if q["book"] in books][: 2 if SMOKE else None]
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = open_books(lib, books)
        search = BookSearch(lib.db)
        cases = []
        for q in questions:
            book = lib.find_book(ids[q["book"]])
            ctx = ToolContext(lib, search, book, book.spoiler_bound)
            query = query_for(Question(q["question"]))
            out = default_tools().run(ctx, "search_book", {"query": query, "top_k": 8})
            cases.append(([p for p in out.parts if isinstance(p, Passage)], query))
        lib.close()
    rows: dict[str, list[tuple[float, float]]] = {"before": [], "now": [], "light": []}
    timed(*cases[0], NOW)  # the encoder loaded
    for _ in range(rounds(2)):
        for found, query in cases:  # interleaved, question by question
            rows["before"].append(timed(found, query, BEFORE))
            rows["now"].append(timed(found, query, NOW))
            rows["light"].append(timed(found, query, LIGHT))
    for name, value in NOW.items():
        setattr(answer_sentence, name, value)
    print(f"bench_passages_speed on {machine()}: {len(cases)} questions × {rounds(2)}")
    for side in ("before", "now", "light"):
        wall = median([w for w, _ in rows[side]])
        cpu = median([c for _, c in rows[side]])
        report(
            f"choose(), {side}: wall, CPU (median)",
            f"{wall:.0f} ms, {cpu:.0f} ms CPU",
            "<= 100 ms CPU",
            cpu <= 100,
        )
    for side in ("now", "light"):
        ratios = [n[1] / b[1] for b, n in zip(rows["before"], rows[side], strict=True) if b[1]]
        report(f"{side} ÷ before (CPU, pair by pair)", f"{median(ratios):.2f}×", "-", True)


if __name__ == "__main__":
    main()
