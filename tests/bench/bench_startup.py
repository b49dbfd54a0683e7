"""Start-up as a user waits for it: from spawning the process to the first painted window.

The app's own timer (``desktop/app.py``) starts after the interpreter and the first imports,
so it understates the wait by 0.1–0.4 s; here the clock starts just before the process is
spawned and stops at the wall-clock time of the window's first paint, which the app prints
with ``MARGIN_STARTUP_TIMING=1`` (``desktop/runtime/startup_timing.py``). A code base at git
``--base REF`` (default: main before issue 41) prints only "window shown after" once its
window is shown and painted: its time is taken when the benchmark reads that line.
Bytecode is cached as in an installed app (``PYTHONDONTWRITEBYTECODE`` is dropped; the
warm-up run writes it). Variants run interleaved, ``ROUNDS`` each, medians reported: a bare PySide6 window, the base
and the working tree, with an empty library and with a library of one book.

Target (issue 27, item 8): window visible <= 0.5 s from spawn; issue 41: at most 2.0× the
bare window's time, pair by pair (each process's CPU time when its line is read, beside).
Smoke: MARGIN_BENCH_SMOKE=1 (the bare window and the working tree, one round).
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_startup.py [--base REF]
     [--rounds N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import FIXTURES, ROOT, SMOKE, WINDOW_CODE, base_tree, machine, median, report

BASE = "1b9e308"  # main before issue 41 (the window's start-up work)
ROUNDS = 7
MARKER = "margin: first paint at"
BARE = """
import sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow
class Paint(QObject):
    def eventFilter(self, w, e):
        if e.type() == QEvent.Type.Paint:
            print(f"margin: first paint at {time.time_ns()} ns", file=sys.stderr, flush=True)
            w.removeEventFilter(self)
        return False
app = QApplication(sys.argv)
win = QMainWindow(); win.resize(1000, 700)
f = Paint(); win.installEventFilter(f); win.show(); app.processEvents()
"""


def cpu_ms(pid: int) -> float:
    """CPU time the process's threads have used so far (``/proc/PID/task/*/schedstat``,
    in nanoseconds: finer than the 10 ms ticks of ``/proc/PID/stat``)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(task.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e6


def spawn_to_paint(command: list[str], cwd: Path, home: str) -> tuple[float, float]:
    """(milliseconds from just before the spawn to the first paint (or the shown line), the
    process's CPU milliseconds when its line was read)."""
    env = {**os.environ, "MARGIN_STARTUP_TIMING": "1", "QT_QPA_PLATFORM": "offscreen"}
    env.pop("MARGIN_HOME", None)
    # an installed app starts from compiled bytecode (pip and the bundle write .pyc files):
    # with PYTHONDONTWRITEBYTECODE set (as on the build machines) every start compiled the
    # whole app from source again, ~100 ms the user never waits for
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    spawned = time.time_ns()
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert proc.stderr is not None
    result = cpu = float("nan")
    for line in proc.stderr:
        if MARKER in line:
            cpu = cpu_ms(proc.pid)
            painted = int(line.split(MARKER, 1)[1].split()[0])
            result = (painted - spawned) / 1e6
            break
        if "window shown after" in line:
            cpu = cpu_ms(proc.pid)
            result = (time.time_ns() - spawned) / 1e6
            break
    proc.stderr.read()
    proc.wait(timeout=60)
    return result, cpu


def main(base: str, rounds: int) -> None:
    print(
        f"bench_startup on {machine()}; base {base} vs working tree, {1 if SMOKE else rounds} rounds"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = base_tree(base, folder, WINDOW_CODE) if not SMOKE else ROOT

        def library(name: str, code: Path, book: bool) -> str:
            """A data folder of its own for each code base (the base cannot open a library
            the working tree has updated)."""
            home = folder / name
            args = ["import", str(FIXTURES / "books" / "alice_in_wonderland.epub")]
            subprocess.run(
                [sys.executable, "-m", "core.cli", "--data-dir", str(home), *(args if book else ["books"])],
                cwd=code, check=True, capture_output=True,
            )  # fmt: skip
            return str(home)

        window = [sys.executable, "-m", "desktop", "--exit-after-shown", "--data-dir"]
        variants = {
            "bare PySide6 window": (lambda home: [sys.executable, "-c", BARE], ROOT, [""]),
            "base, empty library": (
                lambda home: [*window, home],
                old,
                [library("base-empty", old, False)],
            ),
            "now, empty library": (
                lambda home: [*window, home],
                ROOT,
                [library("now-empty", ROOT, False)],
            ),
            "base, one book": (lambda home: [*window, home], old, [library("base-one", old, True)]),
            "now, one book": (lambda home: [*window, home], ROOT, [library("now-one", ROOT, True)]),
        }
        if SMOKE:  # the bare window and the working tree, once each
            variants = {
                k: v
                for k, v in variants.items()
                if k in ("bare PySide6 window", "now, empty library")
            }
        # warm the file cache and create both libraries' migrations once
        for make, cwd, homes in variants.values():
            spawn_to_paint(make(homes[0]), cwd, homes[0])
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(rounds if not SMOKE else 1):
            for name, (make, cwd, homes) in variants.items():
                times[name].append(spawn_to_paint(make(homes[0]), cwd, homes[0]))
        bare = times["bare PySide6 window"]
        for name, values in times.items():
            wall, cpu = median([v[0] for v in values]), median([v[1] for v in values])
            # pair by pair with the bare window run just before (the machine's load drifts)
            ratio = median([v[0] / b[0] for v, b in zip(values, bare, strict=True)])
            ratio_cpu = median([v[1] / b[1] for v, b in zip(values, bare, strict=True)])
            target = "-" if not name.startswith("now") else "<= 2.0× bare"
            report(
                f"spawn to first paint, {name}",
                f"{wall:.0f} ms ({ratio:.2f}× bare), {cpu:.0f} ms CPU ({ratio_cpu:.2f}×)",
                target,
                ratio <= 2.0,
            )


if __name__ == "__main__":
    main(
        sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else BASE,
        int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else ROUNDS,
    )
