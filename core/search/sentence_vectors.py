"""The sentence encoder's vectors of a book's chunks (``core.search.encoder``,
all-MiniLM-L6-v2, 384 dimensions), for the answers' search (``BookSearch.search_book`` with
``deep=True``: the agent's ``search_book`` tool and passages mode).

Stored as the static vectors are (``core.search.vectors``): one row per book of
``sentence_vectors``, int8 numbers (384 bytes a chunk) for the book's contiguous chunk ids,
computed by the same background worker after the static ones (about 0.1 s a chunk on two
cores: a novel takes a minute or two), for the books whose answers were asked for: the first
deep search of a book (``want``) asks for them and is answered without them meanwhile (the
static hybrid search). Each chunk is read up to the model's 256 tokens. Without the
encoder's weights nothing is computed and search works as before.
"""

from __future__ import annotations

import threading
from typing import Any

import peewee as pw

from core.search.embedding import VectorsUnavailable
from core.search.vectors import BookVectors, request_vectors

# core.search.encoder's MODEL and DIMS (it imports numpy: search imports this module at
# start-up, the encoder only when a vector is needed); test_sentence_vectors checks them
MODEL = "all-MiniLM-L6-v2"
DIMS = 384

_wanted: dict[str, set[int]] = {}  # library file → books whose vectors were asked for
_wanted_lock = threading.Lock()


def want(db: pw.SqliteDatabase, book_id: int) -> None:
    """Have the book's encoder vectors computed in the background (when they are missing):
    its answers are searched deeply from then on."""
    with _wanted_lock:
        _wanted.setdefault(str(db.database), set()).add(book_id)
    request_vectors(db)


class SentenceVectors(BookVectors):
    table = "sentence_vectors"
    model = MODEL
    dims = DIMS
    kind = "sentence"

    def available(self) -> bool:
        from core.search.encoder import VOCAB_FILE, WEIGHTS_FILE, model_folder

        folder = model_folder()
        return (folder / WEIGHTS_FILE).exists() and (folder / VOCAB_FILE).exists()

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
