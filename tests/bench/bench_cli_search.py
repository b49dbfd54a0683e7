"""``margin search --all`` as a whole process, old code against new against the bare
interpreter, interleaved in one run (issue 41: at most 3× ``python -c pass``).

The command's own search takes a few milliseconds; what it costs is start-up: the modules it
imports (asyncio, Qt, the message types) and the dataclasses they build. The old side is the
code at ``--base`` (default: the commit before issue 41's work), extracted with ``git
archive``; both sides run with compiled byte code, as an installed Margin does.
Run: .venv/bin/python tests/bench/bench_cli_search.py [--books N] [--base REF]
Smoke: MARGIN_BENCH_SMOKE=1 (one book, one round).
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import FIXTURES, ROOT, SMOKE, base_tree, machine, median, old_vs_new, report, rounds

BASE = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else "fede405"
BOOKS = (
    1 if SMOKE else int(sys.argv[sys.argv.index("--books") + 1]) if "--books" in sys.argv else 20
)
ENTRY = "import sys; from desktop.app import main; sys.exit(main())"  # the `margin` script


def library(home: Path, books: int, tree: Path = ROOT) -> None:
    """``books`` copies of the fixture texts imported by the code in ``tree`` (each side of the
    comparison reads a library of its own schema: an older Margin refuses a newer library),
    under other names."""
    sources = [
        FIXTURES / "books" / "metamorphosis.txt",
        FIXTURES / "books" / "alice_in_wonderland.txt",
    ]
    folder = home.parent / f"files-{home.name}"
    folder.mkdir()
    files = []
    for n in range(books):
        source = sources[n % len(sources)]
        copy = folder / f"book{n:03d}.txt"
        copy.write_text(source.read_text(encoding="utf-8") + f"\n\nCopy {n}.\n", encoding="utf-8")
        files.append(str(copy))
    subprocess.run(
        [sys.executable, "-m", "core.cli", "--data-dir", str(home), "import", *files],
        cwd=tree,
        check=True,
        capture_output=True,
    )


def main() -> None:
    print(f"bench_cli_search on {machine()}; {BOOKS} books; old = {BASE}")
    env = {
        k: v for k, v in os.environ.items() if k not in ("MARGIN_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        library(home, BOOKS)
        old = base_tree(BASE, Path(tmp), ("core", "desktop", "prompts", "resources"))
        old_home = Path(tmp) / "old-home"
        library(old_home, BOOKS, old)
        for tree in (old, ROOT):
            compileall.compile_dir(str(tree / "core"), quiet=1)
            compileall.compile_dir(str(tree / "desktop"), quiet=1)
        search = ["search", "--all", "Gregor", "--beyond-read"]
        runs = rounds(15)
        got = old_vs_new(
            {
                "python -c pass": ([sys.executable, "-c", "pass"], ROOT),
                "old": ([sys.executable, "-c", ENTRY, "--data-dir", str(old_home), *search], old),
                "new": ([sys.executable, "-c", ENTRY, "--data-dir", str(home), *search], ROOT),
            },
            runs,
            env,
        )
    floor_wall, floor_cpu = (median(v) for v in got["python -c pass"])
    for side in ("old", "new"):
        wall, cpu = (median(v) for v in got[side])
        report(
            f"{side}: margin search --all ({runs} runs)",
            f"{wall * 1000:.0f} ms, {cpu * 1000:.0f} ms CPU",
            "-",
            True,
        )
        report(
            f"  {side} ÷ python -c pass (wall, CPU)",
            f"{wall / floor_wall:.2f}×, {cpu / floor_cpu:.2f}×",
            "<= 3.0×",
            wall / floor_wall <= 3.0,
        )
    report(
        "python -c pass",
        f"{floor_wall * 1000:.0f} ms, {floor_cpu * 1000:.0f} ms CPU",
        "-",
        True,
    )
    new_wall, new_cpu = (median(v) for v in got["new"])
    old_wall, old_cpu = (median(v) for v in got["old"])
    report(
        "new ÷ old (wall, CPU)",
        f"{new_wall / old_wall:.2f}×, {new_cpu / old_cpu:.2f}×",
        "< 1",
        new_wall < old_wall,
    )


if __name__ == "__main__":
    main()
