"""Which windows a chunk is read in, and how a chunk's windows make its closeness: recall@5 of
deep search (eval_search.py's questions, tuned and held-out apart) for each layout and blend,
as ``core.search.sentence_vectors`` ranks (4-bit vectors, front matter zeroed), without
storing them: each layout's vectors are computed once and kept in a cache folder (the
encoder takes minutes per layout), then every blend is tried on them.

Layouts (``core.search.windows.windows``): ``base`` the chunk's first 254 word pieces (before
windows); ``wS oO`` sentence windows of at most S pieces, O of overlap; ``gS`` sentence groups
of S pieces; ``hS oO`` the chunk's head then windows over the rest (what ships). Blends of a
chunk's window cosines: ``max``, ``max+mean`` (halves), ``max+0.25mean``, ``first+max``, and
with the ``base`` vector beside the windows, ``base+max``, ``max(base,max)``,
``base+max+mean``.

Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/bench_window_layouts.py encode LAYOUT...
     PYTHONPATH=$PWD .venv/bin/python tests/bench/bench_window_layouts.py eval [LAYOUT...]
(cache: $MARGIN_LAYOUTS_CACHE or /tmp/margin-window-layouts; encode layouts in parallel
processes if the machine has the cores)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["MARGIN_DEEP_VECTORS"] = "0"  # nothing in the background: vectors are made here

import numpy as np
from common import machine
from eval_search import book_path, load, recall

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.encoder import load_encoder, one_blas_thread
from core.search.frontmatter import is_front_matter
from core.search.sentence_vectors import pack4, unpack4
from core.search.windows import windows
from core.store.library import Library

CACHE = Path(os.environ.get("MARGIN_LAYOUTS_CACHE", "/tmp/margin-window-layouts"))
LAYOUTS: dict[str, tuple[int, int, bool] | None] = {
    "base": None,
    "w256o64": (254, 64, False),
    "w256o0": (254, 0, False),
    "g128": (128, 0, False),
    "g64": (64, 0, False),
    "h256o64": (254, 64, True),
}
Blend = Callable[[Any, Any, Any, Any], Any]  # (best, mean, first window, base) -> closeness
BLENDS: dict[str, Blend] = {
    "max": lambda mx, mean, first, base: mx,
    "max+mean": lambda mx, mean, first, base: 0.5 * mx + 0.5 * mean,
    "max+0.25mean": lambda mx, mean, first, base: 0.75 * mx + 0.25 * mean,
    "first+max": lambda mx, mean, first, base: 0.5 * mx + 0.5 * first,
    "base+max": lambda mx, mean, first, base: 0.5 * mx + 0.5 * base,
    "max(base,max)": lambda mx, mean, first, base: np.maximum(mx, base),
    "base+max+mean": lambda mx, mean, first, base: (mx + mean + base) / 3,
}


def library() -> tuple[Library, dict[str, int]]:
    """The evaluation's books in a library kept in the cache folder (imported once)."""
    home = CACHE / "library"
    lib = Library.open(resolve_paths(home))
    known_file = CACHE / "books.json"
    known = json.loads(known_file.read_text()) if known_file.exists() else {}
    for key, relative in load()["books"].items():
        if key not in known and book_path(relative).exists():
            book = import_book(lib, book_path(relative)).book
            lib.set_read_to(book.id, book.page_count)
            known[key] = book.id
    known_file.write_text(json.dumps(known))
    return lib, known


def chunk_texts(lib: Library, book_id: int) -> tuple[int, list[str]]:
    rows = lib.db.execute_sql(
        "SELECT c.id, t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
        "WHERE c.book_id = ? ORDER BY c.id",
        (book_id,),
    ).fetchall()
    return int(rows[0][0]), [str(r[1]) for r in rows]


def encode(lib: Library, ids: dict[str, int], layout: str) -> None:
    encoder = load_encoder()
    assert encoder is not None
    size = lambda text: len(encoder.tokenizer.encode(text))  # noqa: E731
    shape = LAYOUTS[layout]
    for key, book_id in ids.items():
        target = CACHE / f"{layout}-{key}.npz"
        if target.exists():
            continue
        _, texts = chunk_texts(lib, book_id)
        owner: list[int] = []
        parts: list[str] = []
        for n, text in enumerate(texts):
            cut = (
                [text] if shape is None else windows(text, size, shape[0], shape[1], head=shape[2])
            )
            owner += [n] * len(cut)
            parts += cut
        start = time.process_time()
        matrix = encoder.encode(parts)
        took = time.process_time() - start
        np.savez(target, owner=np.array(owner), matrix=matrix, took=took)
        print(f"  {layout} {key}: {len(texts)} chunks, {len(parts)} windows, {took:.1f} s CPU")


def stored(lib: Library, book_id: int, layout: str, key: str) -> tuple[int, Any, Any]:
    """(first chunk id, window owners, 4-bit unit rows) of a layout's cached vectors."""
    cached = np.load(CACHE / f"{layout}-{key}.npz")
    first, texts = chunk_texts(lib, book_id)
    owner = cached["owner"]
    matrix = cached["matrix"].copy()
    for row, n in enumerate(owner):
        if is_front_matter(texts[n]):
            matrix[row] = 0
    return first, owner, unpack4(pack4(matrix), 384)


def evaluate(lib: Library, ids: dict[str, int], layouts: list[str]) -> None:
    encoder = load_encoder()
    assert encoder is not None
    data = load()
    held = [q for q in data["questions"] if q.get("split") == "held-out"]
    tuned = [q for q in data["questions"] if q.get("split") != "held-out"]
    base = {b: stored(lib, b, "base", k)[2] for k, b in ids.items()}
    search = BookSearch(lib.db)
    for layout in layouts:
        if not all((CACHE / f"{layout}-{k}.npz").exists() for k in ids):
            print(f"  {layout}: not encoded yet (encode {layout})")
            continue
        vectors = {b: stored(lib, b, layout, k) for k, b in ids.items()}
        for name, blend in BLENDS.items():
            if layout == "base" and name != "max":
                continue

            def cosines(
                book_id: int, query: str, rowids: tuple[int, int], blend: Blend = blend
            ) -> tuple[int, Any]:
                first, owner, matrix = vectors[book_id]
                asked = encoder.encode([query])[0]
                scores = matrix @ asked
                starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
                best = np.maximum.reduceat(scores, starts)
                mean = np.add.reduceat(scores, starts) / np.diff(np.r_[starts, len(owner)])
                out = blend(best, mean, scores[starts], base[book_id] @ asked)
                return rowids[0], out[rowids[0] - first : rowids[1] - first + 1]

            search.sentences.cosines = cosines  # type: ignore[method-assign]
            line = []
            per = ""
            for split, questions in (("tuned", tuned), ("held-out", held), ("all", tuned + held)):
                found = recall(search, ids, questions, mode="deep", show=False)
                every = [x for v in found.values() for x in v]
                line.append(f"{split} {100 * sum(every) / len(every):5.1f} %")
                per = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in found.items())
            print(f"  {layout:<8} {name:<14} " + "  ".join(line) + f"  ({per})", flush=True)


def main() -> None:
    one_blas_thread()
    CACHE.mkdir(parents=True, exist_ok=True)
    command, *layouts = sys.argv[1:] or ["eval"]
    print(f"bench_window_layouts on {machine()}: {command} {' '.join(layouts)}")
    lib, ids = library()
    try:
        if command == "encode":
            for layout in layouts or list(LAYOUTS):
                encode(lib, ids, layout)
        else:
            evaluate(lib, ids, layouts or list(LAYOUTS))
    finally:
        lib.close()


if __name__ == "__main__":
    main()
