"""Deep search's vectors (the sentence encoder's, ``core.search.sentence_vectors``) for the 60
pages after the reader's ``read_to``, timed from the import (issue 41: ≤ 20 s on a quiet
machine, starting at import).

Each run is a fresh process with a new library, as a window holds one: it imports the book
(``import_book``, background work allowed, as in the window), sets ``read_to`` (``--read-to``,
0 by default: a book just added), and waits until every chunk on the 60 pages after
``read_to`` has its windows stored. The old code starts deep vectors only once a
question is asked (``want_soon``): its side asks at once after the import, its best case
(issue 41 measured 89.6 s from the first question). The new side asks what the window asks when the book opens (``want_ahead``). CPU time is
the process's and its vector workers' (those ended, and those still running when the vectors
are there).
Run: .venv/bin/python tests/bench/bench_deep_vectors.py [--rounds 3] [--base REF] [--read-to N]
Smoke (MARGIN_BENCH_SMOKE=1): one round of the new code on Alice's first 6,000 characters.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAGES = 60
LIMIT_S = 600.0


def _arg(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def worker(tree: str, home: str, book: str, read_to: int, ask: bool) -> None:
    """In a fresh process: import, set read_to, (ask), wait for the vectors; one JSON line."""
    sys.path.insert(0, tree)
    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths

    app = Margin.open(resolve_paths(Path(home)))
    started = time.perf_counter()
    book_id = import_book(app.library, Path(book)).book.id
    imported = time.perf_counter() - started
    db = app.library.db
    if read_to:
        app.library.set_read_to(book_id, read_to)
    if ask:
        from core.search.vector_indexer import want_soon

        want_soon(db, book_id)
    else:  # what the window does when the book opens (right after a reader's own import)
        from core.search.vector_indexer import want_ahead

        want_ahead(db, book_id)
    # the chunks on the 60 pages after read_to (positions from the book's first chunk)
    first, low, high = db.execute_sql(
        "SELECT min(id), min(CASE WHEN end_page > ? THEN id END),"
        " max(CASE WHEN start_page <= ? THEN id END) FROM chunk WHERE book_id = ?",
        (read_to, read_to + PAGES, book_id),
    ).fetchone()
    low, high = int(low) - int(first), int(high) - int(first) + 1
    done = 0
    while time.perf_counter() - started < LIMIT_S:
        row = db.execute_sql(
            "SELECT windows FROM sentence_windows WHERE book_id = ?", (book_id,)
        ).fetchone()
        made = bytes(row[0]) if row else b""  # each chunk's windows (0: not yet)
        done = sum(map(bool, made[low:high]))
        if len(made) >= high and all(made[low:high]):
            break
        time.sleep(0.05)
    needed = high - low
    took = time.perf_counter() - started
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers that ended (joined)
    cpu = time.process_time() + ended.ru_utime + ended.ru_stime + _workers_cpu()
    app.close()  # ends the vector worker
    figures = {"imported_s": imported, "vectors_s": took, "chunks": needed, "done": done}
    print("BENCH " + json.dumps({**figures, "cpu_s": cpu}), flush=True)


def _workers_cpu() -> float:
    """CPU seconds of this process's worker processes still running (the vector worker is
    ended without being waited for: the kernel's count for children would miss it)."""
    import multiprocessing

    total = 0.0
    for child in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def one_run(tree: Path, book: Path, work: Path, read_to: int, ask: bool) -> dict[str, float]:
    home = tempfile.mkdtemp(dir=work)
    env = {k: v for k, v in os.environ.items() if k not in ("MARGIN_HOME", "PYTHONPATH")}
    env.pop("MARGIN_DEEP_VECTORS", None)
    # the encoder's weights, for the old tree too (resources/models is not in git)
    models = Path(__file__).resolve().parents[2] / "resources" / "models" / "minilm-l6-v2"
    env["MARGIN_ENCODER_DIR"] = str(models)
    done = subprocess.run(
        [
            *(sys.executable, str(Path(__file__).resolve()), "--worker", str(tree), home),
            *(str(book), str(read_to), "ask" if ask else "-"),
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S * 2,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("BENCH ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(lines[-1][6:])
    return figures


def main() -> None:
    from common import FIXTURES, ROOT, SMOKE, base_tree, machine, median, report, rounds

    base = _arg("--base", "2a07c0d")
    n_rounds = rounds(int(_arg("--rounds", "3")))
    read_to = int(_arg("--read-to", "0"))
    name = "the_adventures_of_sherlock_holmes.epub"
    print(f"bench_deep_vectors on {machine()}; old = {base}; {n_rounds} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        book = FIXTURES / "books" / name
        if SMOKE:  # a few chunks
            text = (FIXTURES / "books" / "alice_in_wonderland.txt").read_text()[:6000]
            book = work / "alice-start.txt"
            book.write_text(text, encoding="utf-8")
        print(f"  book: {book.name}")
        sides = {"new": (ROOT, False)}
        if not SMOKE:
            sides = {"old": (base_tree(base, work), True), **sides}
        rows: dict[str, list[dict[str, float]]] = {n: [] for n in sides}
        for _ in range(n_rounds):
            for side, (tree, ask) in sides.items():
                rows[side].append(one_run(tree, book, work, read_to, ask))
    for side, runs in rows.items():
        took = median([r["vectors_s"] for r in runs])
        cpu = median([r["cpu_s"] for r in runs])
        each = ", ".join(f"{r['vectors_s']:.1f}" for r in runs)
        chunks = int(runs[0]["chunks"])
        print(f"  {side}: {each} s ({chunks} chunks; import {runs[0]['imported_s']:.1f} s)")
        report(
            f"{side}: vectors of the {PAGES} pages after read_to {read_to}",
            f"{took:.1f} s ({cpu:.1f} s CPU)",
            "≤ 20 s" if side == "new" else "-",
            took <= 20 or side != "new",
        )


if __name__ == "__main__":
    if "--worker" in sys.argv:
        at = sys.argv.index("--worker")
        tree, home, book, read_to, ask = sys.argv[at + 1 : at + 6]
        worker(tree, home, book, int(read_to), ask == "ask")
    else:
        main()
