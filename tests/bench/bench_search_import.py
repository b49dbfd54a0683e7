"""What search by meaning costs an import (issue 24, item 7): import time, the time until the
vectors are there (they are computed in the background after the import returns), the
database's size with them, and the importing process's peak memory, at git ``--base``
(default: the commit before hybrid search) against the working tree, in fresh processes,
alternating, ``ROUNDS`` times. Book sets: the fixture books (EPUB and text) and one EPUB of
about 16 MiB. Targets: import <= 1.3 x, database <= 1.2 x.
Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/bench_search_import.py [--base REF]
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 3
BASE = "2ccdf7b"


def worker(root: Path, files: list[Path]) -> None:
    """In a fresh process: import ``files`` with the code at ``root``, print the figures."""
    sys.path.insert(0, str(root))
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.store.library import Library

    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as home:
        first = Library.open(resolve_paths(warm))  # modules an import needs, loaded untimed
        small = Path(warm) / "small.txt"
        small.write_text("CHAPTER I\n\nA few words.\n\nCHAPTER II\n\nA few more.\n")
        import_book(first, small)
        lib = Library.open(resolve_paths(home))
        start = time.perf_counter()
        for path in files:
            import_book(lib, path)
        elapsed = time.perf_counter() - start
        vectors = 0.0
        try:
            from core.search.vector_indexer import indexer_for
        except ImportError:
            pass
        else:
            indexer_for(first.db).wait()
            indexer_for(lib.db).wait()
            vectors = time.perf_counter() - start - elapsed
        first.close()
        lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        lib.db.execute_sql("VACUUM")
        size = lib.paths.database.stat().st_size
        lib.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"size": size, "seconds": elapsed, "vectors": vectors, "peak": peak}))


def main(base: str) -> None:
    from common import (
        FIXTURES,
        ROOT,
        base_tree,
        machine,
        median,
        report,
        run_worker,
        sixteen_mib_epub,
    )

    print(f"bench_search_import on {machine()}; base {base} vs working tree, {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = base_tree(base, folder)
        books = FIXTURES / "books"
        big = sixteen_mib_epub(folder)
        sets = {
            "fixture books": [
                books / n
                for n in (
                    "alice_in_wonderland.epub",
                    "alice_in_wonderland.txt",
                    "metamorphosis.epub",
                    "metamorphosis.txt",
                )
            ],
            f"EPUB of {big.stat().st_size / 1024 / 1024:.1f} MiB": [big],
        }
        for name, files in sets.items():
            figures: dict[str, list[dict[str, float]]] = {"base": [], "now": []}
            for _ in range(ROUNDS):
                figures["base"].append(run_worker(__file__, old, files))
                figures["now"].append(run_worker(__file__, ROOT, files))
            med = {
                k: {f: median([r[f] for r in v]) for f in ("size", "seconds", "vectors", "peak")}
                for k, v in figures.items()
            }
            b, n = med["base"], med["now"]
            print(f"  {name}: {len(files)} files")
            report(
                "  import time now / base",
                f"{n['seconds'] * 1000:.0f} / {b['seconds'] * 1000:.0f} ms = "
                f"{n['seconds'] / b['seconds']:.2f}",
                "<= 1.3",
                n["seconds"] <= 1.3 * b["seconds"],
            )
            report("  vectors ready after the import", f"{n['vectors'] * 1000:.0f} ms", "-", True)
            report(
                "  database now / base",
                f"{n['size'] / 1024:.0f} / {b['size'] / 1024:.0f} KiB = {n['size'] / b['size']:.2f}",
                "<= 1.2",
                n["size"] <= 1.2 * b["size"],
            )
            report(
                "  peak memory now / base",
                f"{n['peak'] / 2**20:.0f} / {b['peak'] / 2**20:.0f} MiB = "
                f"{n['peak'] / b['peak']:.2f}",
                "<= 1.1",
                n["peak"] <= 1.1 * b["peak"],
            )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]])
    else:
        main(sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else BASE)
