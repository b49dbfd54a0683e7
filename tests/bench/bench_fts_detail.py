"""What the search index's options would save and cost, on the 16 MiB-of-XHTML EPUB (issue 27,
item 11): the library is built once with the working tree, then its index ``chunk_index`` is
made again with each option and measured: its size (after VACUUM), the database's size
against the book's, and the queries the app runs on it — phrases ("queen of hearts", the
search box's quoted words, words with an apostrophe, the spoiler check's "X of Y"), NEAR (the
spoiler check), BM25 ranking (search without vectors, library search, the spoiler check's
passages), snippet() and highlight() — with their results compared to today's index. Today's (issue 41) has no positions: FTS5
refuses phrases and NEAR on it, which the app checks on the passages' text instead
(core/search/positions.py), and its bm25() reads and cuts every matching passage again.
"Pages as documents" indexes each page once instead of the overlapping chunks (size only: the
app searches chunks).
Run: .venv/bin/python tests/bench/bench_fts_detail.py
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine, median, sixteen_mib_epub

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.db import open_database
from core.store.library import Library

TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"
VARIANTS = {
    "detail=none (today)": "",
    "detail=none, optimized": "optimize",
    "detail=full (before)": ", detail=full",
    "detail=column": ", detail=column",
}
RANGE = " AND rowid BETWEEN 1 AND 1000000000"
QUERIES = {
    "phrase": f"SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?{RANGE}",
    "NEAR": f"SELECT rowid FROM chunk_index WHERE chunk_index MATCH ?{RANGE} LIMIT 1",
    "bm25 one word": f"SELECT rowid, rank FROM chunk_index WHERE chunk_index MATCH ?{RANGE}"
    " ORDER BY rank LIMIT 30",
    "bm25 five words": f"SELECT rowid, bm25(chunk_index) FROM chunk_index WHERE chunk_index"
    f" MATCH ?{RANGE} ORDER BY bm25(chunk_index) LIMIT 4",
    "snippet": "SELECT rowid, snippet(chunk_index, 0, '[', ']', '…', 24) FROM chunk_index"
    f" WHERE chunk_index MATCH ?{RANGE} ORDER BY rank LIMIT 5",
    "highlight": "SELECT rowid, highlight(chunk_index, 0, '[', ']') FROM chunk_index"
    f" WHERE chunk_index MATCH ?{RANGE} LIMIT 5",
}
ARGS = {
    "phrase": '"queen of hearts"',
    "NEAR": 'NEAR("queen" "tarts", 20)',
    "bm25 one word": '"alice"',
    "bm25 five words": '"tarts" OR "knave" OR "stole" OR "queen" OR "hearts"',
    "snippet": '"rabbit"',
    "highlight": '"rabbit"',
}


def build(folder: Path) -> tuple[Path, int]:
    book = sixteen_mib_epub(folder)
    lib = Library.open(resolve_paths(folder / "home"))
    import_book(lib, book)
    lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    path = lib.paths.database
    lib.close()
    return path, book.stat().st_size


def measure(path: Path, option: str) -> tuple[int, int, dict[str, Any]]:
    db = open_database(path)
    if option == "optimize":
        db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('optimize')")
    elif option:
        db.execute_sql("DROP TABLE chunk_index")
        db.execute_sql(
            "CREATE VIRTUAL TABLE chunk_index USING fts5(text, content='chunk_text', "
            f"content_rowid='id', {TOKENIZE}{option})"
        )
        db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")
    db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute_sql("VACUUM")
    index = db.execute_sql(
        "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'chunk_index%'"
    ).fetchone()[0]
    answers: dict[str, Any] = {}
    for name, sql in QUERIES.items():
        times = []
        try:
            for _ in range(3):
                start = time.perf_counter()
                rows = db.execute_sql(sql, (ARGS[name],)).fetchall()
                times.append(time.perf_counter() - start)
            answers[name] = (rows, median(times))
        except Exception as exc:  # an index option without that kind of query
            answers[name] = (f"error: {exc}", 0.0)
    db.close()
    return path.stat().st_size, int(index), answers


def pages_as_documents(path: Path) -> int:
    """The size of a detail=full index over the pages' text, each page once."""
    db = open_database(path)
    texts = [r[0] for r in db.execute_sql("SELECT text FROM page_plain ORDER BY book_id, number")]
    db.close()
    other = sqlite3.connect(path.with_name("pages.sqlite3"))
    other.execute("PRAGMA page_size = 16384")
    other.execute(f"CREATE VIRTUAL TABLE p USING fts5(x, content='', {TOKENIZE})")
    other.executemany("INSERT INTO p (rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    other.commit()
    other.execute("VACUUM")
    size = other.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'p_%'").fetchone()[0]
    other.close()
    return int(size)


def main() -> None:
    print(f"bench_fts_detail on {machine()}: the 16 MiB-of-XHTML EPUB's library")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built, book = build(folder)
        today: dict[str, Any] = {}
        for label, option in VARIANTS.items():
            copy = folder / "variant.sqlite3"
            shutil.copy(built, copy)
            size, index, answers = measure(copy, option)
            today = today or answers
            print(
                f"  {label:24} index {index / 1e6:5.2f} MB, database {size / 1e6:5.2f} MB"
                f" = {size / book:.2f} x the book"
            )
            for name, (rows, seconds) in answers.items():
                if isinstance(rows, str):
                    print(f"      {name:16} {rows}")
                    continue
                same = "same results" if rows == today[name][0] else "DIFFERENT results"
                print(f"      {name:16} {seconds * 1000:7.1f} ms, {same}")
        index = pages_as_documents(built)
        print(f"  {'pages as documents':24} index {index / 1e6:5.2f} MB (detail=full, size only)")


if __name__ == "__main__":
    sys.exit(main())
