"""The spoiler check before and after a change, in one run: the evaluation by book and kind
(with no model, and with a model that verifies doubtful sentences right) and the cost per
sentence, old and new interleaved sentence by sentence.

"Before" is a previous ``core/agent/spoilers.py`` (the single-file check, as it was before
issue 23's second session), loaded as a module of its own next to today's code:

    git show 9399dc5:core/agent/spoilers.py > /tmp/spoilers_before.py
    .venv/bin/python tests/bench/bench_spoilers.py --before /tmp/spoilers_before.py
"""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from common import median, percentile

from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    EvalBook,
    KindResult,
    evaluate_kinds,
    oracle,
    sentences,
    total,
)


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("spoilers_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"Cannot load {path} as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules["spoilers_before"] = module
    spec.loader.exec_module(module)
    return module


def _line(label: str, before: KindResult, after: KindResult) -> str:
    def pct(a: int, b: int) -> str:
        return f"{a}/{b} = {a / b:.1%}" if b else "-"

    return (
        f"    {label:<30} caught {pct(before.caught, before.leaks):>15} -> "
        f"{pct(after.caught, after.leaks):<15} false alarms "
        f"{pct(before.false_alarms, before.honest):>13} -> {pct(after.false_alarms, after.honest)}"
    )


def accuracy(lib: Library, ids: dict[str, int], old: ModuleType) -> None:
    indexes: dict[str, Any] = {name: old.SpoilerIndex.build(lib.db, i) for name, i in ids.items()}

    def make_old(index: SpoilerIndex, book: EvalBook, question: str) -> Any:
        return old.SpoilerGuard(indexes[book.name], read_to=book.read_to, question=question)

    for label, verify in (("no model", None), ("verifying model", oracle)):
        print(f"  before -> after, {label}:")
        by_kind: dict[str, tuple[KindResult, KindResult]] = {}
        for name, book_id in ids.items():
            one = {name: book_id}
            before = evaluate_kinds(lib.db, one, make_guard=make_old, verify=verify)
            after = evaluate_kinds(lib.db, one, verify=verify)
            for kind in after:
                print(_line(f"{name}/{kind}", before[kind], after[kind]))
                b, a = by_kind.setdefault(kind, (KindResult(), KindResult()))
                by_kind[kind] = (
                    total({"x": b, "y": before[kind]}),
                    total({"x": a, "y": after[kind]}),
                )
        for kind, (b, a) in by_kind.items():
            print(_line(kind, b, a))
        b_all = total({k: v[0] for k, v in by_kind.items()})
        a_all = total({k: v[1] for k, v in by_kind.items()})
        print(_line("all", b_all, a_all))
        if verify is not None:
            for tag, r in (("before", b_all), ("after", a_all)):
                tokens = [c / 4 for c in r.verify_chars] or [0.0]
                print(
                    f"    verification {tag}: {r.verified}/{r.sentences} sentences "
                    f"({r.verified / r.sentences:.0%}), input per call median "
                    f"{median(tokens):.0f} tokens, p95 {percentile(tokens, 95):.0f} (characters / 4)"
                )


def cost(lib: Library, book_id: int, page_count: int, old: ModuleType) -> None:
    """Each sentence checked by the old and the new guard in turn (fresh indexes: cold)."""
    answers = [
        s
        for b in BOOKS
        for kind in ("leaks", "honest", "heldout_leaks", "heldout_honest")
        for s in sentences(f"{b.name}_{kind}")
    ]
    rng = random.Random(23)
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(3):
        read_to = rng.choice([20, 40, page_count // 3])
        guards = {
            "before": old.SpoilerGuard(
                old.SpoilerIndex.build(lib.db, book_id), read_to=read_to, question="What next?"
            ),
            "after": SpoilerGuard(
                SpoilerIndex.build(lib.db, book_id), read_to=read_to, question="What next?"
            ),
        }
        for k, sentence in enumerate(answers):
            order = ("before", "after") if k % 2 else ("after", "before")
            for tag in order:
                start = time.perf_counter()
                guards[tag].check(sentence)
                times[tag].append((time.perf_counter() - start) * 1000)
    for tag, t in times.items():
        print(
            f"  check per sentence with the semantic layer, {tag}: median {median(t):.2f} ms, "
            f"p95 {percentile(t, 95):.2f} ms ({len(t)} checks, 3 MB book, interleaved)"
        )
