"""Recall@5 and added wait of the answers' search re-ranked by best sentence
(``core/search/answer_rerank.py``) on eval_search's questions, per book and split, for a
few settings (candidates re-read ``top``, sentences read together ``window``, weight of the
deep search's own order ``blend``) beside none (``top`` 0). Recall: every question (the
books' text copies too with ``--txt``), the settings sharing the sentence cache. The wait:
every 5th question, the settings interleaved, the cache emptied before each (a reader's
first question on those passages); the added wait is the search's time minus the same
question's time without re-ranking (median and p95), in wall time and in the searching
thread's CPU time (what the wait is on an idle machine: the encoder runs on one thread).

The library (books and their encoder vectors, minutes to compute) is kept in
``~/.cache/margin-eval/bench-rerank`` (``MARGIN_RERANK_LIB`` to move it) and reused.
Run: PYTHONPATH=$PWD nice .venv/bin/python tests/bench/bench_answer_rerank.py
     [--configs TOP:WINDOW:BLEND,...] [--txt] [--misses]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from common import machine
from eval_search import fold, load, open_books

from core.paths import resolve_paths
from core.search import BookSearch, answer_rerank
from core.search.vector_indexer import indexer_for, want
from core.store.library import Library

DEFAULT = "0:1:1,10:1:1,20:1:1,30:1:1,10:1:0,20:1:0,30:1:0"
EVERY = 5  # the wait is measured on every 5th question


def configs() -> list[tuple[int, int, float]]:
    raw = DEFAULT
    if "--configs" in sys.argv:
        raw = sys.argv[sys.argv.index("--configs") + 1]
    out = []
    for part in raw.split(","):
        top, window, blend = part.split(":")
        out.append((int(top), int(window), float(blend)))
    if out[0][0] != 0:
        out.insert(0, (0, 1, 1.0))
    return out


def library() -> tuple[Library, dict[str, int]]:
    folder = Path(
        os.environ.get("MARGIN_RERANK_LIB", Path.home() / ".cache/margin-eval/bench-rerank")
    )
    folder.mkdir(parents=True, exist_ok=True)
    lib = Library.open(resolve_paths(folder / "home"))
    saved = folder / "ids.json"
    if saved.exists():
        ids = json.loads(saved.read_text(encoding="utf-8"))
        for book_id in ids.values():
            want(lib.db, book_id)
        indexer_for(lib.db).wait()
    else:
        ids = open_books(lib, load()["books"])
        saved.write_text(json.dumps(ids), encoding="utf-8")
    return lib, ids


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    data = load()
    settings = configs()
    print(f"bench_answer_rerank on {machine()}: {len(data['questions'])} questions")
    lib, ids = library()
    search = BookSearch(lib.db)
    if not search.sentences.available():
        print("  no sentence encoder weights: nothing to measure (run make)")
        return
    found: dict[tuple, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    held: dict[tuple, list[bool]] = defaultdict(list)
    keys = ("", "-txt") if "--txt" in sys.argv else ("",)
    # recall: every question, the sentence cache shared by the settings (the largest first)
    for q in data["questions"]:
        answer_rerank.forget()
        for key in (q["book"] + k for k in keys):
            if key not in ids:
                continue
            for setting in sorted(settings, key=lambda s: -s[0]):
                answer_rerank.TOP, answer_rerank.WINDOW, answer_rerank.BLEND = setting
                hits = search.search_book(ids[key], q["question"], limit=5, deep=True)
                ok = any(fold(q["answer"]) in fold(h.text) for h in hits)
                found[setting][key].append(ok)
                if q.get("split") == "held-out":
                    held[setting].append(ok)
                if "--misses" in sys.argv and not ok and setting[0]:
                    print(f"    miss {setting} [{key}] {q['question']} -> {q['answer']}")
    # the wait: every EVERY-th question, settings interleaved, the cache emptied before each
    took: dict[tuple, list[float]] = defaultdict(list)
    used: dict[tuple, list[float]] = defaultdict(list)  # CPU time: the wait on an idle machine
    for q in data["questions"][::EVERY]:
        if q["book"] not in ids:
            continue
        for setting in settings:
            answer_rerank.forget()
            answer_rerank.TOP, answer_rerank.WINDOW, answer_rerank.BLEND = setting
            start, cpu = time.perf_counter(), time.thread_time()
            search.search_book(ids[q["book"]], q["question"], limit=5, deep=True)
            took[setting].append(time.perf_counter() - start)
            used[setting].append(time.thread_time() - cpu)
    base, base_cpu = took[settings[0]], used[settings[0]]
    print(
        f"  (wait over {len(base)} questions; load average {os.getloadavg()[0]:.1f}"
        f" on {os.cpu_count()} cores at the end)"
    )
    for setting in settings:
        every = [x for v in found[setting].values() for x in v]
        per = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in found[setting].items())
        added = [t - b for t, b in zip(took[setting], base, strict=True)]
        added_cpu = [t - b for t, b in zip(used[setting], base_cpu, strict=True)]
        hold = held[setting]
        print(
            f"  top {setting[0]:>2} window {setting[1]} blend {setting[2]:.1f}:"
            f" recall@5 {100 * sum(every) / len(every):5.1f} %"
            f" (held-out {100 * sum(hold) / max(1, len(hold)):5.1f} %)  ({per})"
            f"  added wait median {1000 * statistics.median(added):5.0f} ms"
            f" p95 {1000 * p95(added):5.0f} ms; CPU median"
            f" {1000 * statistics.median(added_cpu):5.0f} ms p95 {1000 * p95(added_cpu):5.0f} ms"
        )
    lib.close()


if __name__ == "__main__":
    main()
