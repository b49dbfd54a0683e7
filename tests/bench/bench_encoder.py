"""The sentence encoder's cost in the window (issue 27: RSS ≤ 150 MB; issue 24: deep search).

Each figure comes from a fresh process that imports numpy and the encoder (as the window has
when the agent's ``search_book`` runs), then reads RSS from /proc:

- ``loaded``: MiB more after ``load_encoder()`` and one question embedded;
- ``forgotten``: MiB more than before, once ``forget_encoder()`` has let it go (and freed heap
  pages are given back, as ``desktop/runtime/gc_policy.py`` does when the window is idle);
- ``question ms``: the median time to embed one question (20 questions, after a first);
- ``chunk ms``: the median time to embed 8 chunks of ~200 words (the vectors worker's work).

Run: .venv/bin/python tests/bench/bench_encoder.py               (this tree)
     .venv/bin/python tests/bench/bench_encoder.py --compare REF    (git REF's encoder.py vs
     this tree's, interleaved: one process of each in turn)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("RUNS", "5"))

QUESTIONS = [
    "Why does Alice follow the White Rabbit?",
    "What is written on the bottle she drinks from?",
    "Who is the Cheshire Cat?",
    "How does the Queen of Hearts settle every difficulty?",
    "What happens at the Mad Tea-Party?",
]

CHILD = r"""
import gc, importlib.util, json, statistics, sys, time
from pathlib import Path

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")

source, questions = sys.argv[1], json.loads(sys.argv[2])
import numpy
from core.books.memory import give_back_memory
spec = importlib.util.spec_from_file_location("bench_encoder_under_test", source)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
gc.collect(); give_back_memory()
before = rss()
encoder = module.load_encoder()
encoder.encode([questions[0]])
loaded = rss()
times = []
for n in range(20):
    start = time.perf_counter()
    encoder.encode([questions[n % len(questions)]])
    times.append((time.perf_counter() - start) * 1000)
chunk = " ".join(questions * 8)  # ~200 words
start = time.perf_counter()
for _ in range(3):
    encoder.encode([chunk] * 8)
chunk_ms = (time.perf_counter() - start) * 1000 / 24
del encoder
module.forget_encoder()
gc.collect(); give_back_memory()
print(json.dumps({"loaded": loaded - before, "forgotten": rss() - before,
                  "question_ms": statistics.median(times), "chunk_ms": chunk_ms}))
"""


def measure(source: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), json.dumps(QUESTIONS)],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "MARGIN_ENCODER_DIR": str(ROOT / "resources" / "models" / "minilm-l6-v2"),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    sources = {"this tree": ROOT / "core" / "search" / "encoder.py"}
    temp = tempfile.TemporaryDirectory()
    if "--compare" in sys.argv:
        ref = sys.argv[sys.argv.index("--compare") + 1]
        old = Path(temp.name) / "encoder_ref.py"
        old.write_text(
            subprocess.run(
                ["git", "show", f"{ref}:core/search/encoder.py"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        sources = {ref: old, **sources}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    for _ in range(RUNS):
        for name, source in sources.items():  # interleaved
            results[name].append(measure(source))
    print(f"medians of {RUNS} processes each")
    print(f"{'':12} {'loaded MiB':>11} {'forgotten MiB':>14} {'question ms':>12} {'chunk ms':>9}")
    for name, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"{name:12} {med['loaded']:11.1f} {med['forgotten']:14.1f} "
            f"{med['question_ms']:12.1f} {med['chunk_ms']:9.1f}"
        )
    temp.cleanup()


if __name__ == "__main__":
    main()
