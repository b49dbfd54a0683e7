"""Reopening a book already in the library, from process spawn to the page shown: Margin's
old code against its new code, interleaved in one run (issue 41: pages stored in blocks must
not make reopening the 16 MiB EPUB slower; it was 0.83x calibre's viewer).

Each side gets its own library, where the book is imported once (not timed); then each round
starts ``margin --screenshot PNG BOOK`` on it with the old code and the new (the book is
found by its checksum and opened at its page): the book is shown when the picture appears.
Also, in-process, what a reopen reads from the library (the page on screen and its
neighbours, the contents and page labels) and what Find and the spoiler check read (every
page's text), each in a fresh process.
Run: .venv/bin/python tests/bench/bench_reopen.py [--rounds N] [--base REF | --old-tree DIR]
"""

from __future__ import annotations

import compileall
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_first_open import _env, margin_shown
from common import ROOT, base_tree, machine, median, report, rounds, sixteen_mib_epub

BASE = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else "dba2ab7"
ROUNDS = rounds(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5)
READS = """
import json, sys, time
from pathlib import Path
from core.paths import resolve_paths
from core.store.library import Library
start = time.perf_counter()
library = Library.open(resolve_paths(Path(sys.argv[1])))
book = library.list_books()[0]
n = book.page_count // 2
library.pages(book.id, n - 1, n + 1), library.toc(book.id), library.page_labels(book.id)
opened = time.perf_counter()
library.page_texts(book.id)
done = time.perf_counter()
print(json.dumps({"reopen": opened - start, "all_text": done - opened}))
"""


def reads(tree: Path, home: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", READS, str(home / "data")],
        cwd=tree,
        env=_env(PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    print(f"bench_reopen on {machine()}; old = {BASE}; {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        book = sixteen_mib_epub(work)
        if "--old-tree" in sys.argv:  # another variant's code as the old side
            old = Path(sys.argv[sys.argv.index("--old-tree") + 1])
        else:
            old = base_tree(BASE, work, ("core", "desktop", "prompts", "resources"))
        trees = {"old": old, "new": ROOT}
        homes = {side: work / f"home-{side}" for side in trees}
        for side, tree in trees.items():
            for part in ("core", "desktop"):
                compileall.compile_dir(str(tree / part), quiet=1)
            homes[side].mkdir()
            margin_shown(tree, book, homes[side])  # the import, not timed
        rows: dict[str, list[tuple[float, float]]] = {side: [] for side in trees}
        inside: dict[str, list[dict[str, float]]] = {side: [] for side in trees}
        for _ in range(ROUNDS):
            for side, tree in trees.items():
                rows[side].append(margin_shown(tree, book, homes[side]))
                inside[side].append(reads(tree, homes[side]))
        sizes = {s: (homes[s] / "data" / "library.sqlite3").stat().st_size for s in trees}
        size = book.stat().st_size
        shutil.rmtree(work / "base", ignore_errors=True)
    for side in trees:
        shown = median([r[0] for r in rows[side]])
        cpu = median([r[1] for r in rows[side]])
        opened = median([r["reopen"] for r in inside[side]]) * 1000
        text = median([r["all_text"] for r in inside[side]]) * 1000
        report(
            f"{side}: spawn -> book shown again ({size / 2**20:.1f} MiB EPUB)",
            f"{shown:.2f} s, {cpu:.2f} s CPU; library reads {opened:.0f} ms, every page's "
            f"text {text:.0f} ms; database {sizes[side] / size:.2f}x the book",
            "-",
            True,
        )
    ratio = median([n[0] / o[0] for n, o in zip(rows["new"], rows["old"], strict=True)])
    report("new / old (shown again, pair by pair)", f"{ratio:.2f}x", "<= 1.05", ratio <= 1.05)


if __name__ == "__main__":
    main()
