"""The bundle's small BLAS (packaging/tinyblas.c) against numpy's OpenBLAS, on what the app
multiplies: the MiniLM encoder encoding a question, a passage's sentences and a batch of
chunks, and the vector scores of one book (issue 41: the bundle ≤ 180 MB; OpenBLAS was 22).

Each round runs one process with OpenBLAS and one with the small library put in its place
(``LD_PRELOAD``: its names come first), in turn; each process times every job (median of
its repeats, wall and CPU), after a warm-up. OpenBLAS runs on one thread, as in the app
(``core/search/encoder.py: one_blas_thread``).
Run: .venv/bin/python tests/bench/bench_bundle_blas.py [--rounds N]
Smoke: MARGIN_BENCH_SMOKE=1 (one round, one repeat).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, SMOKE, machine, median, report, rounds

ROUNDS = rounds(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5)
JOBS = r"""
import json, sys, time
import numpy as np
from core.search.encoder import load_encoder
encoder = load_encoder()
text = open(sys.argv[1], encoding="utf-8").read().split()
sentences = [" ".join(text[i : i + 22]) for i in range(0, 22 * 24, 22)]
chunks = [" ".join(text[i : i + 200]) for i in range(0, 200 * 16, 200)]
rng = np.random.default_rng(1)
book = rng.standard_normal((5000, 256)).astype(np.float32)
jobs = {
    "question (12 tokens)": lambda: encoder.encode(["who is the white rabbit and why is he late"]),
    "24 sentences": lambda: encoder.encode(sentences),
    "16 chunks of 200 words": lambda: encoder.encode(chunks),
    "scores of 5,000 vectors": lambda: book @ book[7],
}
repeats = int(sys.argv[2])
out = {}
for name, job in jobs.items():
    job()
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        job()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    out[name] = (sorted(walls)[len(walls) // 2] * 1000, sorted(cpus)[len(cpus) // 2] * 1000)
print(json.dumps(out))
"""


def run(library: Path | None, repeats: int) -> dict[str, tuple[float, float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if library is not None:
        env["LD_PRELOAD"] = str(library)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            JOBS,
            str(ROOT / "tests/fixtures/books/alice_in_wonderland.txt"),
            str(repeats),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return {k: tuple(v) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}  # type: ignore[misc]


def main() -> None:
    print(f"bench_bundle_blas on {machine()}; {ROUNDS} rounds")
    if sys.platform != "linux" or not shutil.which("cc"):
        print("  needs Linux and a C compiler: skipped")
        return
    sys.path.insert(0, str(ROOT / "packaging"))
    import tinyblas

    with tempfile.TemporaryDirectory() as tmp:
        small = tinyblas.build("libtinyblas-bench.so", Path(tmp))
        repeats = 1 if SMOKE else 5
        sides: dict[str, list[dict[str, tuple[float, float]]]] = {"OpenBLAS": [], "small": []}
        for _ in range(ROUNDS):
            sides["OpenBLAS"].append(run(None, repeats))
            sides["small"].append(run(small, repeats))
    for job in sides["OpenBLAS"][0]:
        line = []
        for side in ("OpenBLAS", "small"):
            wall = median([r[job][0] for r in sides[side]])
            cpu = median([r[job][1] for r in sides[side]])
            line.append(f"{wall:.1f}/{cpu:.1f}")
        ratio = median(
            [s[job][1] / o[job][1] for s, o in zip(sides["small"], sides["OpenBLAS"], strict=True)]
        )
        report(
            f"{job}: ms wall/CPU, OpenBLAS | small",
            f"{line[0]} | {line[1]} ({ratio:.2f}× CPU)",
            "-",
            True,
        )


if __name__ == "__main__":
    main()
