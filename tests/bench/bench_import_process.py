"""`margin import FILE` as a whole process (interpreter, imports, parse, store, close), the
code before the text-fidelity work (``--base``, default 5c23e55: main before issue 45's
first merge) against the working tree, interleaved book by book, CPU beside wall (issue 41:
a Standard Ebooks EPUB at most 1.0× before and 1.2 s; the machine is shared, so CPU time is
the steadier figure).

Books: the Standard Ebooks EPUBs built from the source repositories in /work/.mirror
(tests/bench/build_se_corpus.py; the fixture EPUBs when there are none) and a 3 MB text
book (the fixture texts, repeated in chapters). Each run imports one book into a new
MARGIN_HOME; both trees' byte code is compiled first (as an installed Margin has it).
Run: .venv/bin/python tests/bench/bench_import_process.py [--base REF] [--now REF] [--rounds N]
     (``--now REF``: the code at REF instead of the working tree)
Smoke: MARGIN_BENCH_SMOKE=1 (one small EPUB, one round, no byte code compiled, no warm-up).
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import FIXTURES, ROOT, SMOKE, base_tree, machine, median, report, rounds, whole_process

BASE = "5c23e55"
MIRROR = Path("/work/.mirror")


def se_books(folder: Path) -> list[Path]:
    repos = sorted(MIRROR.glob("standardebooks+*/repo")) if MIRROR.exists() else []
    if not repos:
        return sorted((FIXTURES / "books").glob("[a-z]*_*.epub"))
    script = Path(__file__).with_name("build_se_corpus.py")
    subprocess.run(
        [sys.executable, str(script), str(folder), *map(str, repos)],
        check=True,
        capture_output=True,
    )
    return sorted(folder.glob("*.epub"))


def text_book(folder: Path, size: int = 3_000_000) -> Path:
    """About ``size`` bytes of the fixture texts in chapters."""
    texts = [
        (FIXTURES / "books" / n).read_text(encoding="utf-8")
        for n in ("alice_in_wonderland.txt", "metamorphosis.txt")
    ]
    parts, total, n = [], 0, 0
    while total < size:
        n += 1
        body = texts[n % 2]
        parts.append(f"CHAPTER {n}\n\n{body}")
        total += len(body.encode())
    path = folder / "three_mb.txt"
    path.write_text("\n\n".join(parts), encoding="utf-8")
    return path


def imported(tree: Path, book: Path, scratch: Path) -> tuple[float, float]:
    """(wall s, CPU s) of ``margin import book`` run from ``tree`` into a new library."""
    home = Path(tempfile.mkdtemp(dir=scratch))
    env = {**os.environ, "MARGIN_HOME": str(home), "PYTHONPATH": str(tree)}
    env.pop("MARGIN_DEEP_VECTORS", None)
    return whole_process([sys.executable, "-m", "core.cli", "import", str(book)], cwd=tree, env=env)


def main() -> None:
    base = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else BASE
    runs = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else rounds(3)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = base_tree(base, folder)
        (folder / "se").mkdir()
        books = [FIXTURES / "books" / "metamorphosis.epub"] if SMOKE else se_books(folder / "se")
        if not SMOKE:
            books.append(text_book(folder))
        now = ROOT
        if "--now" in sys.argv:
            (folder / "now").mkdir()
            now = base_tree(sys.argv[sys.argv.index("--now") + 1], folder / "now")
        trees = {"before": old, "now": now}
        for tree in () if SMOKE else trees.values():  # byte code, as installed
            compileall.compile_dir(tree / "core", quiet=1, workers=1)
        scratch = folder / "homes"
        scratch.mkdir()
        print(f"bench_import_process on {machine()}; {base} vs working tree, {runs} rounds")
        for book in books:
            got: dict[str, list[tuple[float, float]]] = {side: [] for side in trees}
            for tree in () if SMOKE else trees.values():  # a warm-up each (the page cache)
                imported(tree, book, scratch)
            for _ in range(runs):
                for side, tree in trees.items():  # interleaved
                    got[side].append(imported(tree, book, scratch))
            wall = {s: median([w for w, _ in v]) for s, v in got.items()}
            cpu = {s: median([c for _, c in v]) for s, v in got.items()}
            size = book.stat().st_size / 1e6
            print(f"  {book.name} ({size:.1f} MB)")
            for side in trees:
                report(
                    f"  {side}: CPU, wall (median)",
                    f"{cpu[side]:.2f} s, {wall[side]:.2f} s",
                    "<= 1.2 s CPU" if side == "now" else "-",
                    side != "now" or cpu[side] <= 1.2,
                )
            report(
                "  now ÷ before (CPU)",
                f"{cpu['now'] / cpu['before']:.2f}×",
                "<= 1.0×",
                cpu["now"] <= cpu["before"],
            )


if __name__ == "__main__":
    main()
