"""How good a real verification call could be (issue 23): the evaluation set by kind with no
model, with the oracle (a verifier that is always right: the ceiling), with ``rule_judge``
(sees only the real prompt's passages and question and decides by one fixed rule: an honest
estimate of a literal-minded small model), and optionally with a real model behind a local
Anthropic-compatible server (``--model URL``, a sample of the calls: a small model on these
2 cores takes ~20 s a call).

Run: .venv/bin/python tests/bench/bench_spoiler_judges.py [--model http://127.0.0.1:PORT
[--sample N]]
(llama.cpp's llama-server, built as /work/shared/DESIGN.md says, with SmolLM2-135M-Instruct.)
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

from common import FIXTURES, machine, report
from spoiler_books import BOOKS as SPOILER_BOOKS

from core.agent.spoilers import SpoilerGuard
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    EXTRA_BOOKS,
    KindResult,
    Verify,
    evaluate_kinds,
    oracle,
    total,
)
from tests.core.agent.spoiler_judges import model_judge, rule_judge


def judged(verify_of: object) -> tuple[dict[str, list[int]], object]:
    """Wraps a verify factory to count its verdicts against the labels: right, wrong, none."""
    counts = {"right": [0], "wrong": [0], "none": [0]}

    def make(question: str) -> Verify:
        inner = verify_of(question)  # type: ignore[operator]

        def verify(guard: SpoilerGuard, segment: object, leak: bool) -> tuple[bool | None, int]:
            verdict, chars = inner(guard, segment, leak)
            key = "none" if verdict is None else "right" if verdict is not leak else "wrong"
            counts[key][0] += 1
            return verdict, chars

        return verify

    return counts, make


def show(label: str, kinds: dict[str, KindResult]) -> None:
    kinds["all"] = total(kinds)
    for kind, r in kinds.items():
        report(
            f"{label}, {kind}: caught | false alarms",
            f"{r.caught}/{r.leaks} = {r.recall:.0%} | {r.false_alarms}/{r.honest} = "
            f"{r.false_alarm_rate:.1%}",
            ">= 95 % | <= 2 %",
            r.recall >= 0.95 and r.false_alarm_rate <= 0.02,
        )


def main() -> None:
    url = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else ""
    sample = int(sys.argv[sys.argv.index("--sample") + 1]) if "--sample" in sys.argv else 30
    print(f"bench_spoiler_judges on {machine()}")
    books = FIXTURES / "books"
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = {b.name: import_book(lib, books / b.file).book.id for b in BOOKS}
        for extra in EXTRA_BOOKS:
            if (SPOILER_BOOKS / extra.file).is_file():
                ids[extra.name] = import_book(lib, SPOILER_BOOKS / extra.file).book.id
        print(f"  books: {', '.join(ids)}")
        show("no model", evaluate_kinds(lib.db, ids))
        for label, factory in (("oracle", oracle), ("rule judge", rule_judge)):
            counts, make = judged(factory)
            show(label, evaluate_kinds(lib.db, ids, verify=make))  # type: ignore[arg-type]
            calls = sum(c[0] for c in counts.values())
            print(
                f"  {label}: {calls} verification calls; verdicts right {counts['right'][0]}, "
                f"wrong {counts['wrong'][0]}, none {counts['none'][0]}"
            )
        if url:
            real_model(lib, ids, url, sample)
        lib.close()


def real_model(lib: Library, ids: dict[str, int], url: str, sample: int) -> None:
    """A sample of the doubtful sentences, each through the real verification call."""
    import time

    from core.agent.service import make_provider
    from core.settings import Settings

    provider = make_provider(
        Settings(provider="local", base_url=url, model="local"), None, max_retries=0, timeout=180
    )
    doubtful: list[tuple[str, bool, str, SpoilerGuard, object]] = []

    def collect(question: str) -> Verify:
        def verify(guard: SpoilerGuard, segment: object, leak: bool) -> tuple[bool | None, int]:
            doubtful.append((segment.text, leak, question, guard, segment))  # type: ignore[attr-defined]
            return None, 0

        return verify

    evaluate_kinds(lib.db, ids, verify=collect)
    rng = random.Random(23)
    chosen = rng.sample(doubtful, min(sample, len(doubtful)))
    log: list[tuple[str, bool, bool | None, str]] = []
    started = time.perf_counter()
    for _text, leak, question, guard, segment in chosen:
        model_judge(provider, log)(question)(guard, segment, leak)  # type: ignore[arg-type]
    seconds = (time.perf_counter() - started) / max(1, len(chosen))
    right = sum(1 for _, leak, v, _ in log if v is not None and v is not leak)
    wrong = sum(1 for _, leak, v, _ in log if v is not None and v is leak)
    none = sum(1 for _, _, v, _ in log if v is None)
    print(
        f"  real model at {url}: {len(chosen)} of {len(doubtful)} doubtful sentences, "
        f"{seconds:.1f} s a call; verdicts right {right}, wrong {wrong}, none (the lexical "
        f"decision stands) {none}"
    )
    for text, leak, verdict, reply in log[:8]:
        print(f"    {'leak  ' if leak else 'honest'} {verdict!s:5} {reply[:60]!r} <- {text[:60]}")


if __name__ == "__main__":
    main()
