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
# the anchor of the text book: interactive-books' ingest (github: daehyunpy/interactive-books,
# its git directory fetched beforehand; MARGIN_ANCHOR_GIT names another), run as a whole
# process with only what a text book needs (its text parser, chunker and SQLite stores: its
# own CLI would import every parser, typer and the SDKs too, so this side is the lighter)
ANCHOR_GIT = Path(
    os.environ.get("MARGIN_ANCHOR_GIT", MIRROR / "daehyunpy+interactive-books" / "repo")
)
ANCHOR_INGEST = """
import sys
from pathlib import Path
src, schema, home, book = sys.argv[1:5]
sys.path.insert(0, src)
from interactive_books.app.ingest import IngestBookUseCase
from interactive_books.infra.chunkers.recursive import TextChunker
from interactive_books.infra.parsers.txt import BookParser
from interactive_books.infra.storage.book_repo import BookRepository
from interactive_books.infra.storage.chunk_repo import ChunkRepository
from interactive_books.infra.storage.database import Database
db = Database(Path(home) / "books.db")
db.run_migrations(Path(schema))
parser = BookParser()
ingest = IngestBookUseCase(
    pdf_parser=parser, txt_parser=parser, epub_parser=parser, docx_parser=parser,
    html_parser=parser, md_parser=parser, url_parser=None, chunker=TextChunker(),
    book_repo=BookRepository(db), chunk_repo=ChunkRepository(db),
)
ingest.execute(Path(book), Path(book).stem)
db.close()
"""


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


def _body(text: str) -> str:
    """A Project Gutenberg text without its licence (the importer keeps only what lies
    between the START and END lines)."""
    start, end = text.find("*** START OF"), text.find("*** END OF")
    if start >= 0:
        text = text[text.index("\n", start) + 1 : end if end > start else None]
    return text.strip()


def text_book(folder: Path, size: int = 3_000_000) -> Path:
    """About ``size`` bytes of the fixture texts (their bodies) in chapters."""
    books = FIXTURES / "books"
    texts = [
        _body((books / n).read_text(encoding="utf-8"))
        for n in ("alice_in_wonderland.txt", "metamorphosis.txt")
    ]
    parts, total, n = [], 0, 0
    while total < size:
        n += 1
        body = texts[n % 2]
        parts.append(f"PART {n}\n\n{body}")
        total += len(body.encode())
    path = folder / "three_mb.txt"
    path.write_text("\n\n".join(parts), encoding="utf-8")
    return path


def anchor_tree(folder: Path) -> Path | None:
    """interactive-books' Python source and schema, exported into ``folder``."""
    if not ANCHOR_GIT.exists():
        return None
    tar = subprocess.run(
        ["git", f"--git-dir={ANCHOR_GIT}", "archive", "HEAD", "python/source", "shared/schema"],
        check=True,
        capture_output=True,
    ).stdout
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=tar, check=True)
    return folder


def anchor_ingest(anchor: Path, book: Path, scratch: Path) -> tuple[float, float]:
    home = Path(tempfile.mkdtemp(dir=scratch))
    args = [str(anchor / "python" / "source"), str(anchor / "shared" / "schema"), str(home)]
    cmd = [sys.executable, "-c", ANCHOR_INGEST, *args, str(book)]
    return whole_process(cmd, cwd=home, env={**os.environ, "PYTHONPATH": ""})


def imported(tree: Path, book: Path, scratch: Path) -> tuple[float, float]:
    """(wall s, CPU s) of ``margin import book`` run from ``tree`` into a new library."""
    if tree.name == "anchor":
        return anchor_ingest(tree, book, scratch)
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
        anchor = None if SMOKE else anchor_tree(folder / "anchor")
        for book in books:
            sides = dict(trees)
            if anchor is not None and book.suffix == ".txt":
                sides["interactive-books"] = anchor
            got: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            for tree in () if SMOKE else sides.values():  # a warm-up each (the page cache)
                imported(tree, book, scratch)
            for _ in range(runs):
                for side, tree in sides.items():  # interleaved
                    got[side].append(imported(tree, book, scratch))
            wall = {s: median([w for w, _ in v]) for s, v in got.items()}
            cpu = {s: median([c for _, c in v]) for s, v in got.items()}
            size = book.stat().st_size / 1e6
            print(f"  {book.name} ({size:.1f} MB)")
            for side in sides:
                report(
                    f"  {side}: CPU, wall (median)",
                    f"{cpu[side]:.2f} s, {wall[side]:.2f} s",
                    "<= 1.2 s CPU" if side == "now" else "-",
                    side != "now" or cpu[side] <= 1.2,
                )
            if "interactive-books" in cpu:
                ratio = cpu["now"] / cpu["interactive-books"]
                report("  now ÷ interactive-books (CPU)", f"{ratio:.2f}×", "<= 0.7×", ratio <= 0.7)
            report(
                "  now ÷ before (CPU)",
                f"{cpu['now'] / cpu['before']:.2f}×",
                "<= 1.0×",
                cpu["now"] <= cpu["before"],
            )


if __name__ == "__main__":
    main()
