"""Dense vectors of a book's chunks, for search by meaning beside BM25.

The model (``core.search.embedding``) is WordLlama's static embedding, loaded the first time
a vector is needed. A book's vectors are one row of ``chunk_vectors``
(schema: core/store/migrations.py): int8 numbers, ``dims`` per chunk, for the book's chunk
ids ``first_chunk`` … ``first_chunk + count - 1`` in order (a book's chunks are written in
one transaction, so their ids are contiguous). When the book's chunks change (a re-read),
the row no longer matches them and counts as missing until the book is embedded again;
deleting the book deletes the row (foreign key).

Searching one book is a dot product over its few hundred vectors with numpy (well under a
millisecond); the decoded matrix of the last few books searched is kept in memory.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.search.embedding import (  # re-exported: the model's names, where callers know them
    DIMS,
    MODEL,
    VectorsUnavailable,
    embed,
    pack,
    unpack,
)

__all__ = ["DIMS", "MODEL", "BookVectors", "VectorsUnavailable", "embed", "pack", "unpack"]

log = logging.getLogger("margin.search.vectors")

CACHED_BOOKS = 8


@dataclass(frozen=True)
class _Stored:
    first_chunk: int
    count: int
    matrix: Any  # np.ndarray, float32 unit rows


class BookVectors:
    """The vectors of the library's books: written after an import, searched per book.
    A subclass names another model, its table and its ``embed`` (``sentence_vectors.py``)."""

    table = "chunk_vectors"
    model = MODEL
    dims = DIMS
    kind = "static"  # the worker process's name for this class (``_index_in_worker``)

    def _embed(self, texts: list[str]) -> Any:
        return embed(texts)

    def available(self) -> bool:
        """Whether the model can be there at all (without loading it)."""
        return True

    def _pack(self, matrix: Any) -> bytes:
        return pack(matrix)

    def _unpack(self, blob: bytes) -> Any:
        return unpack(blob, self.dims)

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db
        self._cache: OrderedDict[int, _Stored] = OrderedDict()
        self._lock = threading.Lock()

    # --- writing ---------------------------------------------------------------------------

    def _chunks(self, book_id: int) -> tuple[list[int], list[str]]:
        rows = self.db.execute_sql(
            "SELECT c.id, t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
            "WHERE c.book_id = ? ORDER BY c.id",
            (book_id,),
        ).fetchall()
        return [int(r[0]) for r in rows], [str(r[1]) for r in rows]

    def index_book(self, book_id: int) -> bool:
        """Compute and store the vectors of a book's chunks; False when it has none (or its
        chunks are not contiguous, which a healthy library never has)."""
        from core.search.frontmatter import is_front_matter

        ids, texts = self._chunks(book_id)
        if not ids or ids[-1] - ids[0] + 1 != len(ids):
            return False
        matrix = self._embed(texts)
        for row, text in enumerate(texts):
            if is_front_matter(text):
                matrix[row] = 0  # never near a question
        blob = self._pack(matrix)
        # IMMEDIATE: take the write lock first (waiting for an import's transaction), never
        # upgrade a read to a write, which SQLite refuses at once when another writer is on
        with self.db.atomic("IMMEDIATE"):
            current = self.db.execute_sql(
                "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book_id,)
            ).fetchone()
            if current is None or (current[0], current[1]) != (ids[0], len(ids)):
                return False  # the book was re-read or deleted meanwhile
            self.db.execute_sql(
                f"INSERT OR REPLACE INTO {self.table} (book_id, model, dims, first_chunk, count,"
                " data) VALUES (?, ?, ?, ?, ?, ?)",
                (book_id, self.model, self.dims, ids[0], len(ids), blob),
            )
        with self._lock:
            self._cache.pop(book_id, None)
        return True

    def missing(self) -> list[int]:
        """Ready books whose vectors are missing or no longer match their chunks."""
        if not self.available():
            return []
        return self._stale()

    def _stale(self, also: str = "") -> list[int]:
        """Ready books with no row in the table, or one of another model, size or chunk range
        (or matching ``also``, an SQL condition on the row ``v``)."""
        rows = self.db.execute_sql(
            "SELECT b.id FROM book b "
            "JOIN (SELECT book_id, min(id) AS first, count(*) AS n FROM chunk GROUP BY book_id)"
            " c ON c.book_id = b.id "
            f"LEFT JOIN {self.table} v ON v.book_id = b.id "
            "WHERE b.status = 'ready' AND (v.book_id IS NULL OR v.model != ? OR v.dims != ?"
            f" OR v.first_chunk != c.first OR v.count != c.n{also}) ORDER BY b.id",
            (self.model, self.dims),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def index_missing(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> int:
        """Give every book without (current) vectors its vectors, one book at a time, for an
        existing library in the background; ``progress(done, total)`` after each book.
        Returns how many books were indexed. Stops early when ``cancelled()``."""
        todo = self.missing()
        done = 0
        for n, book_id in enumerate(todo, 1):
            if cancelled is not None and cancelled():
                break
            try:
                if self.index_book(book_id):
                    done += 1
            except VectorsUnavailable:
                break
            except (pw.OperationalError, pw.IntegrityError) as exc:
                log.warning("vectors of book %s not stored (tried again later): %s", book_id, exc)
            if progress is not None:
                progress(n, len(todo))
        return done

    # --- searching -------------------------------------------------------------------------

    def _stored(self, book_id: int) -> _Stored | None:
        with self._lock:
            hit = self._cache.get(book_id)
            if hit is not None:
                self._cache.move_to_end(book_id)
        row = self.db.execute_sql(
            "SELECT v.first_chunk, v.count, c.first, c.n, "
            "CASE WHEN v.first_chunk = c.first AND v.count = c.n AND v.model = ? AND v.dims = ?"
            " THEN 1 ELSE 0 END "
            f"FROM {self.table} v, (SELECT min(id) AS first, count(*) AS n FROM chunk "
            "WHERE book_id = ?) c WHERE v.book_id = ?",
            (self.model, self.dims, book_id, book_id),
        ).fetchone()
        if row is None or not row[4]:
            return None
        if hit is not None and (hit.first_chunk, hit.count) == (row[0], row[1]):
            return hit
        blob = self.db.execute_sql(
            f"SELECT data FROM {self.table} WHERE book_id = ?", (book_id,)
        ).fetchone()
        if blob is None:
            return None
        stored = _Stored(int(row[0]), int(row[1]), self._unpack(bytes(blob[0])))
        return self._remember(self._cache, book_id, stored)

    def _remember(self, cache: OrderedDict[int, Any], book_id: int, stored: Any) -> Any:
        """Keep ``stored`` in ``cache`` (the most recent ``CACHED_BOOKS`` books); it back."""
        with self._lock:
            cache[book_id] = stored
            while len(cache) > CACHED_BOOKS:
                cache.popitem(last=False)
        return stored

    def has(self, book_id: int) -> bool:
        return self._stored(book_id) is not None

    def cosines(self, book_id: int, query: str, rowids: tuple[int, int]) -> tuple[int, Any] | None:
        """How close in meaning to ``query`` each chunk of the book within ``rowids`` is:
        (the first chunk's id, their cosines in chunk order); None when the book has no
        vectors (yet) or they do not cover ``rowids``."""
        stored = self._stored(book_id)
        if stored is None:
            return None
        first = rowids[0] - stored.first_chunk
        last = rowids[1] - stored.first_chunk
        if first < 0 or last >= stored.count or last < first:
            return None
        try:
            wanted = self._embed([query])[0]
        except VectorsUnavailable:
            return None
        return rowids[0], stored.matrix[first : last + 1] @ wanted

    def nearest(
        self, book_id: int, query: str, rowids: tuple[int, int], limit: int
    ) -> list[tuple[int, float]] | None:
        """The ``limit`` chunks of the book within ``rowids`` closest in meaning to ``query``
        as (chunk id, cosine), best first; None when the book has no vectors (yet)."""
        import numpy as np

        found = self.cosines(book_id, query, rowids)
        if found is None:
            return None
        first, scores = found
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(first + int(i), float(scores[i])) for i in top if scores[i] > 0]
