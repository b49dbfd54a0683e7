"""The background vectors' worker process (``core.search.vector_indexer.VectorIndexer`` starts it):
each book's vectors computed and stored, at a low priority, the library opened as it is."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import peewee as pw

from core.search.embedding import VectorsUnavailable

log = logging.getLogger("margin.search.vectors")


def index_books(
    path: str,
    book_ids: list[int],
    send: Any,
    kind: str = "static",
    reader_only: tuple[int, ...] = (),
) -> None:
    """The worker process: each book's vectors, and after each ("ok", "skipped",
    "unavailable" or why it failed) sent back; only the reader's part of the books in
    ``reader_only`` (encoder vectors). It runs at a low priority: the window and every
    reader's work come first."""
    from core.processes import lower_priority

    lower_priority()
    try:
        if kind == "sentence" and len(book_ids) > 1:
            # each reader's pages first (the encoder's vectors of a long book take long)
            for book_id in book_ids:
                try:
                    index_in_worker(path, book_id, kind, reader_first=True)
                except VectorsUnavailable as exc:
                    send.send((book_id, "unavailable"))
                    log.warning("no vectors: %s", exc)
                    return
                except Exception:  # tried again below
                    log.warning("vectors of book %s", book_id, exc_info=True)
        for book_id in book_ids:
            try:
                only = book_id in reader_only
                done = index_in_worker(path, book_id, kind, reader_first=only)
                outcome = "ok" if done else "skipped"
            except VectorsUnavailable as exc:
                send.send((book_id, "unavailable"))
                log.warning("no vectors: %s", exc)
                return
            except Exception as exc:  # this book only; tried again later
                outcome = f"not stored (tried again later): {exc}"
            send.send((book_id, outcome))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the window or command that started it has gone: what is stored stays
    finally:
        send.close()


def index_in_worker(
    path: str, book_id: int, kind: str = "static", *, reader_first: bool = False
) -> bool:
    """In the worker process: compute and store one book's vectors. The library is opened
    as it is, never created or migrated (only the window or a command does that): when its
    schema is not this version's, nothing is done."""
    from core.store.db import PRAGMAS
    from core.store.migrations import SCHEMA_VERSION, current_version
    from core.store.models import page_text, unpack_chunk
    from core.store.page_blocks import margin_page

    if not Path(path).exists():
        return False  # the library was removed meanwhile
    db = pw.SqliteDatabase(path, pragmas=PRAGMAS, check_same_thread=False)
    db.register_function(page_text, "margin_text", 1, deterministic=True)
    db.register_function(unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    try:
        db.connect()
        if current_version(db) != SCHEMA_VERSION:
            return False
        if kind == "sentence":
            from core.search.sentence_vectors import SentenceVectors

            return SentenceVectors(db).index_book(book_id, reader_first=reader_first)
        from core.search.vectors import BookVectors

        return BookVectors(db).index_book(book_id)
    finally:
        db.close()
