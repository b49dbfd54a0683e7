"""The sentence encoder's vectors of a book's chunks (``core.search.encoder``,
all-MiniLM-L6-v2, 384 dimensions), for the answers' search (``BookSearch.search_book`` with
``deep=True``: the agent's ``search_book`` tool and passages mode).

Stored as the static vectors are (``core.search.vectors``): one row per book of
``sentence_vectors`` for the book's contiguous chunk ids, but 4 bits a number (192 bytes a
chunk: int8 would add a fifth to a library's database; eval_search.py loses one question
of 166 to the 4 bits, none of the held-out ones),
computed by the same background worker after the static ones (about 0.1 s a chunk on two
cores: a novel takes a minute or two), for the books whose answers were asked for: the first
deep search of a book (``want``) asks for them and is answered without them meanwhile (the
static hybrid search). Each chunk is read up to the model's 256 tokens. Without the
encoder's weights nothing is computed and search works as before.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import peewee as pw

from core.search.embedding import VectorsUnavailable
from core.search.vectors import BookVectors, request_vectors

# core.search.encoder's MODEL and DIMS (it imports numpy: search imports this module at
# start-up, the encoder only when a vector is needed); test_sentence_vectors checks them
MODEL = "all-MiniLM-L6-v2"
DIMS = 384
DEEP_VECTORS_ENV = "MARGIN_DEEP_VECTORS"  # "0": no encoder vectors are computed

_wanted: dict[str, set[int]] = {}  # library file → books whose vectors were asked for
_wanted_lock = threading.Lock()


def want(db: pw.SqliteDatabase, book_id: int) -> None:
    """Have the book's encoder vectors computed in the background (when they are missing):
    its answers are searched deeply from then on. ``MARGIN_DEEP_VECTORS=0`` turns this
    off (the encoder's vectors cost minutes of CPU per novel: a laptop on battery, the test
    suite); deep search then stays the hybrid search for books without them."""
    if os.environ.get(DEEP_VECTORS_ENV) == "0":
        return
    with _wanted_lock:
        _wanted.setdefault(str(db.database), set()).add(book_id)
    request_vectors(db)


def want_soon(db: pw.SqliteDatabase, book_id: int) -> None:
    """A question on this book was just asked: its encoder vectors are asked for now (once
    a session), not when the agent's first deep search comes a few seconds later. Cheap
    (no numpy, no database read); nothing when the weights are not there."""
    with _wanted_lock:
        if book_id in _wanted.get(str(db.database), ()):
            return
    from core.search.encoder_files import weights_present

    if weights_present():
        want(db, book_id)


class SentenceVectors(BookVectors):
    table = "sentence_vectors"
    model = MODEL
    dims = DIMS
    kind = "sentence"

    def available(self) -> bool:
        from core.search.encoder_files import weights_present

        return weights_present()

    def _pack(self, matrix: Any) -> bytes:
        return pack4(matrix)

    def _unpack(self, blob: bytes) -> Any:
        return unpack4(blob, self.dims)

    def _embed(self, texts: list[str]) -> Any:
        from core.search.encoder import load_encoder

        encoder = load_encoder()
        if encoder is None:
            raise VectorsUnavailable("the sentence encoder's weights are not there")
        return encoder.encode(texts)

    def missing(self) -> list[int]:
        """The books asked for (``want``) whose encoder vectors are missing or stale."""
        with _wanted_lock:
            wanted = set(_wanted.get(str(self.db.database), ()))
        return [b for b in super().missing() if b in wanted] if wanted else []


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
