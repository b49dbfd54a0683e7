"""A read-then-write transaction waits for another process's write instead of failing.

With SQLite's deferred transactions in WAL mode, a transaction that has read and then writes
is refused at once ("database is locked", no busy wait) when another connection committed in
between. The library's transactions take the write lock when they begin, so the other writer
waits for them instead (seen as a flaky "database is locked" in the window while the
background vectors worker wrote the same library)."""

from __future__ import annotations

import sqlite3

import pytest

from core.store.library import Library


def test_a_transaction_that_read_still_writes_when_another_process_writes(
    library: Library,
) -> None:
    other = sqlite3.connect(library.paths.database, timeout=0.2, isolation_level=None)
    other.execute("CREATE TABLE IF NOT EXISTS elsewhere (x INTEGER)")
    with library.db.atomic():
        library.db.execute_sql("SELECT count(*) FROM book").fetchone()  # a read began
        # another process writes now: it must wait for us, not slip in before our write
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("INSERT INTO elsewhere VALUES (1)")
        library.db.execute_sql("CREATE TABLE IF NOT EXISTS ours (y INTEGER)")
        library.db.execute_sql("INSERT INTO ours VALUES (1)")
    other.execute("INSERT INTO elsewhere VALUES (2)")  # and it goes on once we are done
    assert library.db.execute_sql("SELECT count(*) FROM ours").fetchone()[0] == 1
    assert other.execute("SELECT count(*) FROM elsewhere").fetchone()[0] == 1
    other.close()
