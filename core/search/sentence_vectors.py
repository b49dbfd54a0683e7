"""The sentence encoder's vectors of a book's chunks (``core.search.encoder``,
all-MiniLM-L6-v2, 384 dimensions), for the answers' search (``BookSearch.search_book`` with
``deep=True``: the agent's ``search_book`` tool and passages mode).

The encoder reads at most 254 word pieces of a text, and a chunk is often longer (half of
Alice's). So each chunk is read whole: its head (what was read before windows), then windows
of whole sentences over the rest (``core.search.windows``); a chunk is as close to a question
as its best window and the mean of its windows, blended (``MEAN_WEIGHT``; the layout and the
blend were chosen by tests/bench/bench_window_layouts.py).

Stored in ``sentence_windows``, one row per book: 4 bits a number (192 bytes a window:
int8 would add a fifth to a library's database), the windows of its chunks in order, with
how many windows each chunk has, for its first ``done`` chunks (the book's contiguous chunk
ids from ``first_chunk``; ``count`` is how many chunks the book had); a chunk with 0 windows
is not reached yet. They are computed by the background worker (``core.search.vectors``):
the reader's part first (the chunks of the last ``BEHIND_PAGES`` read and of the
``AHEAD_PAGES`` after ``read_to``, where questions go), then the chunks before it, then the
rest, stored as they come, so a reader at page 150 of a long book gets deep search in
seconds, not once the whole book is done. Deep search uses the vectors of the chunks that
have them and the words' ranking alone for the others. The reader's part is asked for when
a book is imported or opened and as its reader reads on (``mark_ahead``), the whole book
once a question is asked about it (``want``). Without the encoder's weights nothing is
computed and search works as before.

A library from before windows keeps its one vector per chunk (``sentence_vectors``, the
first 254 word pieces) for deep search until the book's windows are all there.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.search.embedding import VectorsUnavailable
from core.search.vectors import BookVectors, _Stored

# core.search.encoder's MODEL and DIMS (it imports numpy: search imports this module at
# start-up, the encoder only when a vector is needed); test_sentence_vectors checks them
MODEL = "all-MiniLM-L6-v2"
DIMS = 384
DEEP_VECTORS_ENV = "MARGIN_DEEP_VECTORS"  # "0": no encoder vectors are computed

WINDOW = 254  # word pieces a window holds at most (the encoder's 256 with [CLS] and [SEP])
OVERLAP = 64  # word pieces of the window before that a window starts with, at most
HEAD = True  # a chunk's first window is its head, as read before windows (windows.py)
MEAN_WEIGHT = 0.25  # a chunk's closeness: (1 - this) × its best window's + this × their mean
AHEAD_PAGES = 60  # the chunks starting up to this far past read_to come first (issue 41)
BEHIND_PAGES = 10  # with those of the last pages read
ROW_BYTES = DIMS // 2  # a window's packed bytes (4 bits a number)
BATCH = 32  # chunks encoded between two writes at least (a fourth of those done, at most)
BATCH_MAX = 256  # and at most (about a minute: what a stopped worker may lose)
WINDOWS_ENV = "MARGIN_ENCODER_WINDOWS"  # how many windows of a chunk are read (1 to 255)


def _max_windows() -> int:
    """A chunk's windows beyond these are not read (one byte counts them). 1, its head only,
    by default: on the held-out-2 questions (tests/bench/eval_search.py) more windows with
    this session's BM25 found 66 answers of 85 where the head alone found 70, and 203 of 251
    over every split where the head alone found 208. Reading order stays (``AHEAD_PAGES``)."""
    raw = os.environ.get(WINDOWS_ENV, "1")
    return min(max(int(raw), 1), 255) if raw.isdigit() else 1


MAX_WINDOWS = _max_windows()
# a row's model: another recomputes
LAYOUT = f"{MODEL}/{'h' if HEAD else 'w'}{WINDOW}o{OVERLAP}m{MAX_WINDOWS}"

_wanted: dict[str, set[int]] = {}  # library file → books whose vectors were asked for
_ahead: dict[str, set[int]] = {}  # and books whose reader's part alone was (``mark_ahead``)
_wanted_lock = threading.Lock()
_asked: dict[str, dict[int, int]] = {}  # library file → book → when last asked for (a count)
_asking = itertools.count()


def mark_wanted(db: pw.SqliteDatabase, book_id: int) -> bool:
    """Count the book's encoder vectors as asked for (``SentenceVectors.missing`` lists it
    from then on); False when ``MARGIN_DEEP_VECTORS=0`` turns them off. The background
    indexer (``vector_indexer.want``) is woken by the caller."""
    if os.environ.get(DEEP_VECTORS_ENV) == "0":
        return False
    with _wanted_lock:
        _wanted.setdefault(str(db.database), set()).add(book_id)
        _asked.setdefault(str(db.database), {})[book_id] = next(_asking)
    return True


def mark_ahead(db: pw.SqliteDatabase, book_id: int) -> bool:
    """Count the reader's part of the book (its chunks up to ``AHEAD_PAGES`` past
    ``read_to``: where the next questions go) as asked for, from its import or opening on,
    before any question: the rest of the book waits for ``mark_wanted``. False when
    ``MARGIN_DEEP_VECTORS=0`` turns vectors off."""
    if os.environ.get(DEEP_VECTORS_ENV) == "0":
        return False
    with _wanted_lock:
        _ahead.setdefault(str(db.database), set()).add(book_id)
        _asked.setdefault(str(db.database), {})[book_id] = next(_asking)
    return True


def is_wanted(db: pw.SqliteDatabase, book_id: int) -> bool:
    """Whether the book's encoder vectors were asked for in this session."""
    with _wanted_lock:
        return book_id in _wanted.get(str(db.database), ())


@dataclass(frozen=True)
class Windows:
    """A book's stored windows: chunk ``first_chunk + n`` (n < ``done``) has the rows
    ``starts[n]`` … ``starts[n + 1] - 1`` of ``matrix`` (float32 unit rows)."""

    first_chunk: int
    count: int
    done: int
    starts: Any  # np.ndarray of done + 1 offsets
    matrix: Any

    @property
    def complete(self) -> bool:
        """Every chunk of the book has its windows (none left out for the reader's first)."""
        return self.done == self.count and bool((self.starts[1:] > self.starts[:-1]).all())


class _Legacy(BookVectors):
    """One vector per chunk (its first 254 word pieces), as libraries from before windows
    hold them: deep search uses them until the book's windows are all there."""

    table = "sentence_vectors"
    model = MODEL
    dims = DIMS
    kind = "sentence"

    def _unpack(self, blob: bytes) -> Any:
        return unpack4(blob, self.dims)

    def _embed(self, texts: list[str]) -> Any:
        return _encode(texts)

    def cosines(self, book_id: int, query: str, rowids: tuple[int, int]) -> tuple[int, Any] | None:
        try:
            return super().cosines(book_id, query, rowids)
        except (sqlite3.OperationalError, pw.OperationalError):  # no such table
            return None


class SentenceVectors(BookVectors):
    table = "sentence_windows"
    model = LAYOUT
    dims = DIMS
    kind = "sentence"

    def __init__(self, db: pw.SqliteDatabase) -> None:
        super().__init__(db)
        self._windows_cache: OrderedDict[int, Windows] = OrderedDict()
        self.legacy = _Legacy(db)

    def available(self) -> bool:
        from core.search.encoder_files import weights_present

        return weights_present()

    def _pack(self, matrix: Any) -> bytes:
        return pack4(matrix)

    def _unpack(self, blob: bytes) -> Any:
        return unpack4(blob, self.dims)

    def _embed(self, texts: list[str]) -> Any:
        return _encode(texts)

    # --- writing ---------------------------------------------------------------------------

    def missing(self) -> list[int]:
        """The books asked for (``want``) whose windows are missing, stale or not all there,
        and those whose reader's part alone was (``mark_ahead``) while it is not there; the
        book asked for last first (the one being read: the worker does each book's reader's
        part in this order, then the rest)."""
        with _wanted_lock:
            wanted = set(_wanted.get(str(self.db.database), ()))
            ahead = set(_ahead.get(str(self.db.database), ())) - wanted
            asked = dict(_asked.get(str(self.db.database), {}))
        if not (wanted or ahead) or not self.available():
            return []
        stale = self._stale(" OR v.done < v.count OR instr(v.windows, x'00') > 0")
        found = [b for b in stale if b in wanted or (b in ahead and not self._reader_there(b))]
        return sorted(found, key=lambda b: -asked.get(b, -1))

    def reader_only(self, book_ids: list[int]) -> list[int]:
        """Those of ``book_ids`` whose reader's part alone is asked for."""
        with _wanted_lock:
            wanted = _wanted.get(str(self.db.database), set())
            return [b for b in book_ids if b not in wanted]

    def _reader_there(self, book_id: int) -> bool:
        """Whether the book's chunks up to a little past the reader have their windows."""
        row = self.db.execute_sql(
            "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book_id,)
        ).fetchone()
        if row is None or not row[1]:
            return True  # nothing to compute
        first, count = int(row[0]), int(row[1])
        _, made, _ = self._resume(book_id, first, count)
        # asked again only once the reader is halfway through the pages computed ahead: a
        # worker process is not started for every page turned
        low, high = self._reader_span(book_id, first, count, AHEAD_PAGES // 2)
        return len(made) >= high and all(made[low:high])

    def _reader_span(
        self, book_id: int, first: int, count: int, ahead: int = -1
    ) -> tuple[int, int]:
        """The reader's part of the book's chunks (positions from the first, end excluded):
        those ending after ``BEHIND_PAGES`` before ``read_to`` and starting up to ``ahead``
        pages past it (at least one chunk)."""
        row = self.db.execute_sql("SELECT read_to FROM book WHERE id = ?", (book_id,)).fetchone()
        read_to = int(row[0] or 0) if row is not None else 0
        low, high = self.db.execute_sql(
            "SELECT min(CASE WHEN end_page > ? THEN id END),"
            " max(CASE WHEN start_page <= ? THEN id END) FROM chunk WHERE book_id = ?",
            (read_to - BEHIND_PAGES, read_to + (AHEAD_PAGES if ahead < 0 else ahead), book_id),
        ).fetchone()
        stop = max(1, min(count, int(high) - first + 1)) if high is not None else 1
        start = min(stop - 1, int(low) - first) if low is not None else 0
        return max(0, start), stop

    def index_book(self, book_id: int, *, reader_first: bool = False) -> bool:
        """Compute and store the windows of a book's chunks, going on from those already
        stored: the reader's part first (``_reader_span``: the pages just read and the 60
        after them, where questions go), then the chunks before it, then the rest, written
        every ``BATCH`` chunks or more (a stopped worker loses one batch at most). A chunk not
        reached yet before ``done`` has no windows (0). ``reader_first``: stop once the
        reader's part is there. False when the book has no chunks (or they changed)."""
        import numpy as np

        from core.search.frontmatter import is_front_matter

        row = self.db.execute_sql(
            "SELECT min(id), max(id), count(*) FROM chunk WHERE book_id = ?", (book_id,)
        ).fetchone()
        if row is None or not row[2] or row[1] - row[0] + 1 != row[2]:
            return False
        first, count = int(row[0]), int(row[2])
        _, counts, data = self._resume(book_id, first, count)
        made = list(counts)  # each chunk's windows (0: not reached yet), up to ``done``
        pieces: list[bytes] = []  # each chunk's packed windows
        at = 0
        for n in made:
            pieces.append(data[at : at + n * ROW_BYTES])
            at += n * ROW_BYTES
        encoder = _encoder()
        low, high = self._reader_span(book_id, first, count)
        for part, (begin, end) in enumerate(((low, high), (0, low), (high, count))):
            if part == 1 and reader_first:
                break
            while True:
                start = next((i for i in range(begin, end) if i >= len(made) or not made[i]), end)
                if start >= end:
                    break
                step = min(BATCH_MAX, max(BATCH, sum(map(bool, made)) // 4))
                stop = min(end, start + step)
                stop = next((i for i in range(start, stop) if i < len(made) and made[i]), stop)
                texts = self._texts(book_id, first + start, first + stop - 1)  # a batch's only
                if len(texts) != stop - start:
                    return False  # the book was re-read or deleted meanwhile
                cuts = cut_windows(encoder, texts)
                # front matter is never near a question: zeros, not encoded
                front = [is_front_matter(text) for text in texts]
                read = encoder.encode(
                    [w for cut, skip in zip(cuts, front, strict=True) if not skip for w in cut]
                )
                matrix = np.zeros((sum(map(len, cuts)), DIMS), dtype=np.float32)
                row = at = 0
                for cut, skip in zip(cuts, front, strict=True):
                    if not skip:
                        matrix[row : row + len(cut)] = read[at : at + len(cut)]
                        at += len(cut)
                    row += len(cut)
                packed = pack4(matrix)
                if stop > len(made):
                    made += [0] * (stop - len(made))
                    pieces += [b""] * (stop - len(pieces))
                row = 0
                for i, cut in enumerate(cuts, start):
                    made[i] = len(cut)
                    pieces[i] = packed[row * ROW_BYTES : (row + len(cut)) * ROW_BYTES]
                    row += len(cut)
                if not self._write(book_id, first, count, len(made), bytes(made), b"".join(pieces)):
                    return False
        return True

    def _texts(self, book_id: int, low: int, high: int) -> list[str]:
        rows = self.db.execute_sql(
            "SELECT t.text FROM chunk c JOIN chunk_text t ON t.id = c.id "
            "WHERE c.book_id = ? AND c.id BETWEEN ? AND ? ORDER BY c.id",
            (book_id, low, high),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def _resume(self, book_id: int, first: int, count: int) -> tuple[int, bytes, bytes]:
        """(chunks done, their window counts, their windows' bytes) stored for the book's
        current chunks; nothing when the row is missing or stale."""
        row = self.db.execute_sql(
            f"SELECT model, dims, first_chunk, count, done, windows, data FROM {self.table} "
            "WHERE book_id = ?",
            (book_id,),
        ).fetchone()
        if row is None or (row[0], row[1], row[2], row[3]) != (self.model, self.dims, first, count):
            return 0, b"", b""
        return int(row[4]), bytes(row[5]), bytes(row[6])

    def _write(
        self, book_id: int, first: int, count: int, done: int, counts: bytes, data: bytes
    ) -> bool:
        # IMMEDIATE: take the write lock first (waiting for an import's transaction), never
        # upgrade a read to a write, which SQLite refuses at once when another writer is on
        with self.db.atomic("IMMEDIATE"):
            current = self.db.execute_sql(
                "SELECT min(id), count(*) FROM chunk WHERE book_id = ?", (book_id,)
            ).fetchone()
            if current is None or (current[0], current[1]) != (first, count):
                return False  # the book was re-read or deleted meanwhile
            self.db.execute_sql(
                f"INSERT OR REPLACE INTO {self.table} (book_id, model, dims, first_chunk, count,"
                " done, windows, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (book_id, self.model, self.dims, first, count, done, counts, data),
            )
            if done == count and all(counts):  # the vectors of before are no longer needed
                try:
                    self.db.execute_sql(
                        "DELETE FROM sentence_vectors WHERE book_id = ?", (book_id,)
                    )
                except (sqlite3.OperationalError, pw.OperationalError):
                    pass  # no such table
        with self._lock:
            self._windows_cache.pop(book_id, None)
        return True

    # --- searching -------------------------------------------------------------------------

    def windows(self, book_id: int) -> Windows | None:
        """The book's stored windows (of its current chunks, perhaps not all yet)."""
        import numpy as np

        row = self.db.execute_sql(
            "SELECT v.first_chunk, v.count, v.done, "
            "CASE WHEN v.first_chunk = c.first AND v.count = c.n AND v.model = ? AND v.dims = ?"
            " THEN 1 ELSE 0 END, length(v.data) "
            f"FROM {self.table} v, (SELECT min(id) AS first, count(*) AS n FROM chunk "
            "WHERE book_id = ?) c WHERE v.book_id = ?",
            (self.model, self.dims, book_id, book_id),
        ).fetchone()
        if row is None or not row[3] or not row[2]:
            return None
        key = (int(row[0]), int(row[1]), int(row[2]))
        rows = int(row[4] or 0) // ROW_BYTES  # chunks before ``done`` are filled in too
        with self._lock:
            hit = self._windows_cache.get(book_id)
            if (
                hit is not None
                and (hit.first_chunk, hit.count, hit.done) == key
                and (hit.matrix.shape[0] == rows)
            ):
                self._windows_cache.move_to_end(book_id)
                return hit
        blobs = self.db.execute_sql(
            f"SELECT windows, data FROM {self.table} WHERE book_id = ?", (book_id,)
        ).fetchone()
        if blobs is None:
            return None
        made = np.frombuffer(bytes(blobs[0]), dtype=np.uint8)
        starts = np.zeros(len(made) + 1, dtype=np.int64)
        np.cumsum(made, out=starts[1:])
        matrix = self._unpack(bytes(blobs[1]))
        if len(made) != key[2] or matrix.shape[0] != starts[-1]:
            return None  # damaged: computed again once asked for
        stored: Windows = self._remember(
            self._windows_cache, book_id, Windows(*key, starts, matrix)
        )
        return stored

    def has(self, book_id: int) -> bool:
        """Whether every chunk of the book has its windows."""
        stored = self.windows(book_id)
        return stored is not None and stored.complete

    def _stored(self, book_id: int) -> _Stored | None:
        """One unit vector per chunk, as before windows (``core.agent.spoiler_semantic`` reads
        chunks this way, with thresholds chosen on those): each chunk's head window (with
        ``HEAD``; else the mean of its windows), for a book whose windows are all there;
        else the book's vectors from before windows, when it has them."""
        import numpy as np

        from core.search.embedding import _unit

        stored = self.windows(book_id)
        if stored is None or not stored.complete:
            try:
                return self.legacy._stored(book_id)
            except (sqlite3.OperationalError, pw.OperationalError):  # no such table
                return None
        if HEAD:
            matrix = stored.matrix[stored.starts[:-1]]
        else:
            sums = np.add.reduceat(stored.matrix, stored.starts[:-1], axis=0)
            matrix = _unit(sums.astype(np.float32))
        return _Stored(stored.first_chunk, stored.count, matrix)

    def cosines(self, book_id: int, query: str, rowids: tuple[int, int]) -> tuple[int, Any] | None:
        """How close in meaning to ``query`` each chunk of the book within ``rowids`` is:
        (the first chunk's id, their closeness in chunk order: the blend of their best
        window's cosine and their windows' mean). A chunk without windows yet is 0 (the
        words alone rank it), unless the book's one vector per chunk from before windows
        covers ``rowids`` (then those are used). None when nothing covers any of it."""
        import numpy as np

        stored = self.windows(book_id)
        lo = rowids[0] - (stored.first_chunk if stored else 0)
        hi = rowids[1] - (stored.first_chunk if stored else 0)
        if stored is None or lo < 0 or hi >= stored.count or hi < lo or lo >= stored.done:
            return self.legacy.cosines(book_id, query, rowids)
        end = min(hi, stored.done - 1)
        sizes = np.diff(stored.starts[lo : end + 2])
        have = sizes > 0  # the chunks with windows (one not reached yet has none)
        if hi >= stored.done or not have.all():
            # not all there yet: the vectors of before cover it, if kept
            whole = self.legacy.cosines(book_id, query, rowids)
            if whole is not None or not have.any():
                return whole
        try:
            wanted = self._embed([query])[0]
        except VectorsUnavailable:
            return None
        begin = stored.starts[lo]
        scores = stored.matrix[begin : stored.starts[end + 1]] @ wanted
        offsets = (stored.starts[lo : end + 1] - begin)[have]
        best = np.maximum.reduceat(scores, offsets)
        mean = np.add.reduceat(scores, offsets) / sizes[have]
        out = np.zeros(hi - lo + 1, dtype=np.float32)
        out[: end - lo + 1][have] = (1 - MEAN_WEIGHT) * best + MEAN_WEIGHT * mean
        return rowids[0], out


def cut_windows(encoder: Any, texts: list[str]) -> list[list[str]]:
    """The windows of each chunk text that the encoder reads (``core.search.windows``)."""
    from core.search.windows import windows

    size = lambda text: len(encoder.tokenizer.encode(text))  # noqa: E731
    return [windows(t, size, WINDOW, OVERLAP, head=HEAD)[:MAX_WINDOWS] for t in texts]


def _encoder() -> Any:
    from core.search.encoder import load_encoder

    encoder = load_encoder()
    if encoder is None:
        raise VectorsUnavailable("the sentence encoder's weights are not there")
    return encoder


def _encode(texts: list[str]) -> Any:
    return _encoder().encode(texts)


def pack4(matrix: Any) -> bytes:
    """Each row as 4-bit numbers -8 … 7, two to a byte (the first in the high half): the row
    divided by 3 standard deviations of its numbers, times 7, rounded and clipped (the rare
    larger numbers clipped, the many small ones kept apart). Cosine needs no scale."""
    import numpy as np

    spread = 3 * matrix.std(axis=1, keepdims=True)
    spread[spread == 0] = 1.0
    q = (np.clip(np.round(matrix / spread * 7), -8, 7) + 8).astype(np.uint8)
    if q.shape[1] % 2:
        raise ValueError("4-bit vectors need an even number of dimensions")
    return ((q[:, 0::2] << 4) | q[:, 1::2]).tobytes()


def unpack4(blob: bytes, dims: int) -> Any:
    """Unit rows (float32) of ``pack4``'s bytes; a row of zeros stays zeros."""
    import numpy as np

    from core.search.embedding import _unit

    packed = np.frombuffer(blob, dtype=np.uint8).reshape(-1, dims // 2)
    out = np.empty((packed.shape[0], dims), dtype=np.float32)
    out[:, 0::2] = (packed >> 4).astype(np.float32) - 8
    out[:, 1::2] = (packed & 15).astype(np.float32) - 8
    return _unit(out)
