"""The first question's one-time work, done before it is asked (issue 41: Send → first word
≤ 300 ms once the window has been open 5 s). Measured in the window by
tests/bench/bench_first_word.py, the first question on a book waited for:

- the SDK's client, built on the stream thread's loop at the first request (its TLS context:
  40-70 ms) → ``connect`` builds it there first;
- the spoiler check's word statistics, read back from the library (~50 ms on the database
  thread) → ``warm_book`` reads them into the service's cache;
- the spoiler check's tables, built at its first sentence on the window's thread while the
  answer's first words waited (~50 ms) → ``warm_book`` checks one sentence;
- the disk space kept in reserve for saving an answer (made once) → ``warm_book`` makes it;
- the system prompt's files, read on the window's thread → ``warm_book`` reads them.

Nothing here imports the SDK at module level; ``connect`` runs after the window is painted.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

import peewee as pw

from core.store import reserve

if TYPE_CHECKING:
    from core.agent.service import AgentService

log = logging.getLogger("margin.agent.warm")

WARM_QUESTION = "Who is this about?"
WARM_SENTENCE = "It was Qwertyan. "  # a word the book lacks: every table


async def connect(service: AgentService) -> None:
    """The model's SDK imported and its client built where answers use it (nothing for
    passages mode)."""
    warm = getattr(service.provider(), "warm", None)
    if warm is not None:
        await warm()


def stats_stored(db: pw.SqliteDatabase, book_id: int) -> bool:
    """Whether the spoiler check's word statistics of the book are stored (the window counts
    them after an import; counting them here too would do that work twice)."""
    from core.agent.spoiler_stats import STATS_VERSION

    try:
        row = db.execute_sql(
            "SELECT version FROM spoiler_stats WHERE book_id = ?", (book_id,)
        ).fetchone()
    except (sqlite3.Error, pw.DatabaseError):
        return False
    return row is not None and row[0] == STATS_VERSION


def warm_book(service: AgentService, book_id: int) -> bool:
    """On a worker thread, once a book is open with a model connected: what its first
    question would otherwise do on the way. False when the book's spoiler statistics are
    not counted yet (call again later)."""
    from core.agent.context import BookContext

    reserve.ensure(service.paths.data)
    book = service.library.get_book(book_id)
    # the prompt's files are read once (on the window's thread, at the first question)
    for bound in {book.spoiler_bound, None}:
        BookContext().system(book, bound=bound, selection=None, citations=True)
    if not service.settings.spoiler_safe or book.spoiler_bound is None:
        return True
    if not stats_stored(service.library.db, book_id):
        return False
    from core.agent.spoilers import SpoilerGuard

    index = service.spoilers.get(service.library.db, book_id)
    guard = SpoilerGuard(index, read_to=book.spoiler_bound, question=WARM_QUESTION)
    guard.feed(WARM_SENTENCE)
    guard.flush()
    return True
