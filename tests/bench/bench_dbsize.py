"""Library database size against the books' own size, and import time, base vs now.

Book sets: the fixture books (Alice and Metamorphosis, EPUB and text), hold-out books the
project's tests never tuned on (real prose in other layouts: EPUBs cut into other chapters,
this machine's licence texts as an EPUB, a Markdown and an HTML book), synthetic
Gutenberg-shaped EPUBs (their small-vocabulary text packs 4.5x in the zip, so their ratio is
harsher than a real book's), a real-book PDF made of the fixture PDFs repeated, and all of
them in one library. Each set is imported into a new library by a fresh process running
either the code at git ``--base`` (default: the commit before schema v8) or the working tree,
alternating, ``ROUNDS`` times; the database is checkpointed and vacuumed before it is
measured. Target (issue 17, item 13): database <= 2.5 x the books' size, import no slower.
Run: .venv/bin/python tests/bench/bench_dbsize.py [--base REF]
     (BENCH_DBSIZE_SETS=27: only the fixture books and the 16 MiB EPUB;
      BENCH_DBSIZE_SETS=41: those and the Sherlock Holmes EPUB, each <= 2.0 x (issue 41);
      BENCH_DBSIZE_VECTORS=1: also the size once the background indexer has added the books'
      vectors, about 8 s more per round for the 16 MiB EPUB)
     The search index's options (detail, pages as documents) and what each costs:
     tests/bench/bench_fts_detail.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = int(os.environ.get("BENCH_DBSIZE_ROUNDS", "3"))
BASE = "fd5c526"
# Issue 27, item 11 compares against main before it: --base 2ccdf7b (figures of the
# dbsize branch: --base bbffe79, main when it began)


def worker(root: Path, files: list[Path]) -> None:
    """In a fresh process: import ``files`` with the code at ``root`` and print the figures."""
    sys.path.insert(0, str(root))
    from core.books.importer import import_book
    from core.books.pdf import shutdown_workers
    from core.paths import resolve_paths
    from core.store.library import Library

    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as home:
        # one small book first, in a library of its own: the modules an import needs are
        # loaded then, not timed with the books
        first = Library.open(resolve_paths(warm))
        small = Path(warm) / "small.txt"
        small.write_text("CHAPTER I\n\nA few words.\n\nCHAPTER II\n\nA few more.\n")
        import_book(first, small)
        first.close()
        lib = Library.open(resolve_paths(home))
        start = time.perf_counter()
        for path in files:
            import_book(lib, path)
        elapsed = time.perf_counter() - start
        shutdown_workers()
        db, database = lib.db, lib.paths.database
        wal = Path(f"{database}-wal")
        # as left on disk by the import (the log holds the whole import's transaction until
        # it is checkpointed), then checkpointed: free pages are what VACUUM would give back
        left = {
            "database": database.stat().st_size,
            "wal": wal.stat().st_size if wal.exists() else 0,
        }
        db.execute_sql("UPDATE book SET opened_at = datetime('now')")  # the next write
        left["wal_after_write"] = wal.stat().st_size if wal.exists() else 0
        db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        left["checkpointed"] = database.stat().st_size
        left["free_pages"] = db.execute_sql("PRAGMA freelist_count").fetchone()[0]
        db.execute_sql("VACUUM")
        db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote to the log
        size = database.stat().st_size
        try:  # where the bytes are (SQLite's dbstat table, when it is compiled in)
            rows = db.execute_sql(
                "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
            ).fetchall()
        except Exception:  # only a breakdown for the report
            rows = []
        vectors = _with_vectors(lib) if os.environ.get("BENCH_DBSIZE_VECTORS") else 0
        lib.close()
    print(
        json.dumps(
            {
                "size": size,
                "seconds": elapsed,
                "tables": dict(rows),
                "left": left,
                "vectors": vectors,
            }
        )
    )


def _with_vectors(lib: Any) -> int:
    """The database's size once the background indexer has given the books their vectors
    (search by meaning; a few seconds after an import in the app)."""
    try:
        from core.search.vectors import BookVectors
    except ImportError:  # code from before vectors
        return 0
    vectors = BookVectors(lib.db)
    for book in lib.list_books():
        vectors.index_book(book.id)
    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    lib.db.execute_sql("VACUUM")
    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return int(lib.paths.database.stat().st_size)


def book_sets(folder: Path) -> dict[str, list[Path]]:
    from bench_import import real_book_pdf
    from common import FIXTURES

    from tests.core.books.epubgen import gutenberg_like_epub, make_epub

    books = FIXTURES / "books"
    fixture = [
        books / n
        for n in (
            "alice_in_wonderland.epub",
            "alice_in_wonderland.txt",
            "metamorphosis.epub",
            "metamorphosis.txt",
        )
    ]
    synthetic = [
        gutenberg_like_epub(folder / "holmes.epub", paragraphs_per_part=40),
        gutenberg_like_epub(folder / "holmes-nav.epub", use_ncx=False, paragraphs_per_part=90),
    ]
    # real prose in layouts the fixtures do not have: EPUBs cut into other chapters, the
    # licence texts of this machine as a book, Markdown and HTML
    holdout = []
    for name in ("metamorphosis", "alice_in_wonderland"):
        paras = [
            p.strip().replace("\n", " ").replace("&", "&amp;").replace("<", "&lt;")
            for p in (books / f"{name}.txt").read_text(encoding="utf-8").split("\n\n")
            if p.strip()
        ]
        chapters = [
            (f"Section {i // 45 + 1}", "".join(f"<p>{p}</p>" for p in paras[i : i + 45]))
            for i in range(0, len(paras), 45)
        ]
        holdout.append(make_epub(folder / f"{name}-recut.epub", chapters, title=name))
    licences = sorted(Path("/usr/share/common-licenses").glob("*"))
    chapters = [
        (f.name, "".join(f"<p>{p.strip()}</p>" for p in f.read_text().split("\n\n") if p))
        for f in licences
        if f.is_file() and not f.is_symlink()
    ]
    if chapters:
        holdout.append(make_epub(folder / "licences.epub", chapters, title="Licences"))
    # Markdown and HTML books from the text of Metamorphosis, in its own parts
    text = (books / "metamorphosis.txt").read_text(encoding="utf-8")
    paragraphs = [p.strip().replace("\n", " ") for p in text.split("\n\n") if p.strip()]
    md = folder / "metamorphosis.md"
    md.write_text(
        "\n\n".join(
            (f"## Part {i // 80 + 1}\n\n" if i % 80 == 0 else "") + p
            for i, p in enumerate(paragraphs)
        ),
        encoding="utf-8",
    )
    html = folder / "alice.html"
    alice = (books / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    html.write_text(
        "<html><head><title>Alice</title></head><body>"
        + "".join(
            (f"<h2>Part {i // 60 + 1}</h2>" if i % 60 == 0 else "") + f"<p>{p}</p>"
            for i, p in enumerate(
                p.strip().replace("\n", " ").replace("<", "&lt;")
                for p in alice.split("\n\n")
                if p.strip()
            )
        )
        + "</body></html>",
        encoding="utf-8",
    )
    holdout += [md, html]
    pdf = [real_book_pdf(folder / "realbook.pdf")]
    from common import sixteen_mib_epub

    big = [sixteen_mib_epub(folder)]
    if os.environ.get("BENCH_DBSIZE_SETS") == "27":  # issue 27: the fixtures and the big EPUB
        return {"16 MiB-of-XHTML EPUB (issue 27)": big, "fixture books": fixture}
    if os.environ.get("BENCH_DBSIZE_SETS") == "41":  # issue 41: and one real book alone
        sherlock = [books / "the_adventures_of_sherlock_holmes.epub"]
        return {
            "Sherlock Holmes EPUB": sherlock,
            "16 MiB-of-XHTML EPUB": big,
            "fixture books": fixture,
        }
    return {
        "16 MiB-of-XHTML EPUB (issue 27)": big,
        "fixture books": fixture,
        "hold-out EPUB, Markdown, HTML": holdout,
        "synthetic Gutenberg-shaped EPUBs": synthetic,
        "real-book PDF (420 pages)": pdf,
        "all together": fixture + holdout + synthetic + pdf,
    }


def main(base: str) -> None:
    from common import ROOT, base_tree, machine, median, report, run_worker

    print(f"bench_dbsize on {machine()}; base {base} vs working tree, {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = base_tree(base, folder)
        sets = book_sets(folder)
        for name, files in sets.items():
            books = sum(f.stat().st_size for f in files)
            figures: dict[str, list[dict[str, Any]]] = {"base": [], "now": []}
            for _ in range(ROUNDS):
                figures["base"].append(run_worker(__file__, old, files))
                figures["now"].append(run_worker(__file__, ROOT, files))
            size = {k: median([r["size"] for r in v]) for k, v in figures.items()}
            secs = {k: median([r["seconds"] for r in v]) for k, v in figures.items()}
            print(f"  {name}: {len(files)} files, {books / 1024:.0f} KiB")
            report(
                "  database / books, base",
                f"{size['base'] / books:.2f} x ({size['base'] / 1024:.0f} KiB)",
                "-",
                True,
            )
            goal = 2.0 if os.environ.get("BENCH_DBSIZE_SETS") == "41" else 2.5
            report(
                "  database / books, now",
                f"{size['now'] / books:.2f} x ({size['now'] / 1024:.0f} KiB)",
                f"<= {goal} x",
                size["now"] <= goal * books,
            )
            for side in ("base", "now"):
                last = figures[side][-1]
                tables = last.get("tables", {})
                big = {n: b for n, b in tables.items() if b >= 50_000}
                rest = sum(b for n, b in tables.items() if n not in big)
                print(
                    f"    where the bytes are, {side}: "
                    + ", ".join(f"{n} {b / 1e6:.2f}" for n, b in big.items())
                    + f", {len(tables) - len(big)} others {rest / 1e6:.2f} MB"
                )
                left = last.get("left")
                if left:
                    print(
                        f"    left by the import, {side}: database {left['database'] / 1e6:.2f} MB"
                        f" + log {left['wal'] / 1e6:.2f} MB (after the next write"
                        f" {left['wal_after_write'] / 1e6:.2f} MB); checkpointed"
                        f" {left['checkpointed'] / 1e6:.2f} MB with {left['free_pages']} free"
                        f" pages; vacuumed {last['size'] / 1e6:.2f} MB"
                    )
                if last.get("vectors"):
                    print(
                        f"    with the books' vectors, {side}: {last['vectors'] / 1e6:.2f} MB ="
                        f" {last['vectors'] / books:.2f} x"
                    )
            ratio = secs["now"] / secs["base"]
            report(
                "  import time now / base",
                f"{secs['now'] * 1000:.0f} / {secs['base'] * 1000:.0f} ms = {ratio:.2f}",
                "<= 1.0 (noise)",
                ratio <= 1.05,
            )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]])
    else:
        main(sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else BASE)
