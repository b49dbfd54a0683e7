"""Start-up of built bundles, as a user waits for it: from spawning ``Margin`` to its window's
first paint (the app prints that paint's wall-clock time with ``MARGIN_STARTUP_TIMING=1``).
Two bundles, interleaved, ``ROUNDS`` each, medians; each with an empty library and with a
library of one book, in a data folder of its own. Compare a bundle before and after a
packaging change (issue 24: what the bundle leaves out must not slow start-up).

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_bundle_startup.py
     OLD/Margin/Margin NEW/Margin/Margin [--rounds N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench_startup import spawn_to_paint
from common import FIXTURES, machine, median, report

ROUNDS = 9


def main(bundles: list[Path], rounds: int) -> None:
    print(f"bench_bundle_startup on {machine()}; {rounds} rounds, interleaved")
    with tempfile.TemporaryDirectory() as tmp:
        variants = {}
        for n, app in enumerate(bundles):
            for book in (False, True):
                home = Path(tmp) / f"{n}-{int(book)}"
                args = ["import", str(FIXTURES / "books" / "alice_in_wonderland.epub")]
                subprocess.run(
                    [str(app), "--data-dir", str(home), *(args if book else ["books"])],
                    check=True, capture_output=True, timeout=120,
                )  # fmt: skip
                name = (
                    f"{app.parent.parent.name}/{app.parent.name}, {'one book' if book else 'empty'}"
                )
                variants[name] = [str(app), "--exit-after-shown", "--data-dir", str(home)]
        for command in variants.values():  # warm the file cache
            spawn_to_paint(command, Path(tmp), "")
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, command in variants.items():
                times[name].append(spawn_to_paint(command, Path(tmp), ""))
        for name, values in times.items():
            report(f"spawn to first paint, {name}", f"{median(values):.0f} ms", "-", True)


if __name__ == "__main__":
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else ROUNDS
    paths = [Path(a).resolve() for a in sys.argv[1:] if not a.startswith("--") and not a.isdigit()]
    main(paths, rounds)
