"""Shared bits of the benchmarks: the machine line, medians and percentiles, the old code base
of a comparison, the worker subprocess and the 16 MiB EPUB."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.conftest import FIXTURES  # noqa: E402  (re-exported: the one place that finds the fixtures)


def machine() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}"


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def report(name: str, measured: str, target: str, ok: bool) -> None:
    print(f"  {name:<46} {measured:>22}   target {target:<14} {'OK' if ok else 'MISSED'}")


CODE = ("core", "prompts")  # what a core-only comparison needs of the old code base
WINDOW_CODE = ("core", "desktop", "prompts", "resources")  # and a window one


def base_tree(ref: str, folder: Path, parts: tuple[str, ...] = CODE) -> Path:
    """The project's ``parts`` as they were at ``ref``, extracted into ``folder/base`` (again
    into the same folder to add more parts): the old side of an old-vs-new benchmark."""
    old = folder / "base"
    old.mkdir(exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", ref, *parts], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    models, linked = ROOT / "resources" / "models", old / "resources" / "models"
    if (old / "resources").is_dir() and models.is_dir() and not linked.exists():
        # the encoder's weights are not in git: without them the old side would run without
        # the encoder (no vectors worker, less memory), and the comparison would be unfair
        linked.symlink_to(models, target_is_directory=True)
    return old


def run_worker(script: str, root: Path, files: list[Path], **env: str) -> Any:
    """``script --worker root files…`` in a fresh interpreter (no bytecode written into the old
    tree); the JSON of its last line."""
    done = subprocess.run(
        [sys.executable, script, "--worker", str(root), *map(str, files)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def sixteen_mib_epub(work: Path) -> Path:
    """The 16 MiB-of-XHTML EPUB (Alice's text, 140 chapters) of issues 24 and 27."""
    from tests.core.books.epubgen import make_epub

    text = " ".join((FIXTURES / "books" / "alice_in_wonderland.txt").read_text().split())
    body = "".join(f"<p>{text[i : i + 900]}</p>\n  " for i in range(0, 120_000, 900))
    return make_epub(
        work / "big16.epub", [(f"Chapter {n + 1}", body) for n in range(140)], title="Sixteen"
    )


class Heartbeat:
    """A Qt timer on the UI thread every ``ms``: ``gaps`` holds the milliseconds between its
    ticks, so a stall of the UI thread shows as one long gap (``ms`` when all is well)."""

    def __init__(self, ms: int = 10) -> None:
        from PySide6.QtCore import QTimer

        self.ms = ms
        self.gaps: list[float] = []
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(ms)
        self.timer.timeout.connect(self.beat)

    def beat(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self.last) * 1000)
        self.last = now

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start()

    def reset(self) -> None:
        """Forget the gaps so far (the settling after start)."""
        self.gaps.clear()
        self.last = time.perf_counter()

    def stop(self) -> None:
        self.timer.stop()


# Smoke mode (MARGIN_BENCH_SMOKE=1, as tests/test_bench_smoke.py runs it): one small round,
# to prove the benchmark still runs; its figures mean nothing.
SMOKE = os.environ.get("MARGIN_BENCH_SMOKE") == "1"


def rounds(full: int) -> int:
    """How many interleaved rounds to run: ``full``, or 1 in smoke mode."""
    return 1 if SMOKE else full


def whole_process(
    cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Run ``cmd`` to its end: (wall seconds, CPU seconds: user + system of the process and
    its children, as the kernel counted them)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def old_vs_new(
    sides: dict[str, tuple[list[str], Path]], runs: int, env: dict[str, str] | None = None
) -> dict[str, tuple[list[float], list[float]]]:
    """Each side's command run ``runs`` times, the sides in turn (A B C A B C …) so that a
    change in the machine's load falls on all of them: {name: (walls, cpus)}."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
    for cmd, cwd in sides.values():  # a warm-up each (the OS page cache)
        whole_process(cmd, cwd=cwd, env=env)
    for _ in range(runs):
        for name, (cmd, cwd) in sides.items():
            wall, cpu = whole_process(cmd, cwd=cwd, env=env)
            out[name][0].append(wall)
            out[name][1].append(cpu)
    return out
