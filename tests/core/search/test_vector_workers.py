"""The background vectors worker leaves nothing behind (issue 27: no idle worker process
10 s after an import): once a book's vectors are done, neither the worker nor
multiprocessing's resource tracker is left; and it runs at a low priority meanwhile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core import processes
from core.books import pdf
from core.books.importer import import_book
from core.paths import resolve_paths
from core.processes import NICE
from core.search import vector_indexer
from core.search.vector_indexer import indexer_for
from core.store.library import Library
from tests.conftest import BOOKS

pytestmark = pytest.mark.timeout(300)


def _children() -> set[int]:
    tasks = Path(f"/proc/{os.getpid()}/task")
    return {int(p) for t in tasks.iterdir() for p in (t / "children").read_text().split()}


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return f"{pid} (gone)"


def _nice(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[16])  # field 19: nice


def _text_book(folder: Path, name: str, start: int) -> Path:
    text = (BOOKS / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    path = folder / name
    path.write_text(text[start : start + 20_000], encoding="utf-8")
    return path


def test_no_process_is_left_once_the_vectors_are_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from multiprocessing import resource_tracker

    monkeypatch.delenv("MARGIN_WORKER_NICE")  # the app's own priority (the suite sets 0)

    pdf.shutdown_workers(wait=True)  # an earlier test's PDF workers: not this test's
    processes.stop_resource_tracker()  # an earlier test's tracker, where nothing needs it now
    for other in list(vector_indexer._indexers.values()):
        # an earlier test's library still at work (a module's shared one): its workers, and
        # those it would start meanwhile, are not this test's
        other.wait(120)
    before = _children()
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        indexer = indexer_for(lib.db)
        priorities: list[int] = []
        beside: list[set[int]] = []

        def heard(done: int, total: int) -> None:
            worker = indexer._worker
            if worker is not None and worker.pid is not None:
                priorities.append(_nice(worker.pid) - os.nice(0))
                # the worker alone: no multiprocessing resource tracker beside it (issue 41)
                beside.append(_children() - before - {worker.pid})

        indexer.listeners.append(heard)
        import_book(lib, _text_book(tmp_path, "one.txt", 2_000))
        import_book(lib, _text_book(tmp_path, "two.txt", 40_000))
        assert indexer.wait(240)
        lowered = min(NICE, 19 - os.nice(0))  # 19 is the lowest priority there is
        assert priorities and all(p == lowered for p in priorities), priorities
        assert all(not others for others in beside), [_command(p) for p in set().union(*beside)]
        # the worker has ended, and the resource tracker it started too, unless something
        # else in this test process still needs it (an earlier test's worker or pool)
        tracker = resource_tracker._resource_tracker
        tracker_running = getattr(tracker, "_fd", None) is not None
        assert not tracker_running or processes.tracker_needed()
        left = _children() - before
        if tracker_running:  # kept for something else (checked above): not this test's child
            left.discard(getattr(tracker, "_pid", None) or -1)
        assert left == set(), [_command(pid) for pid in left]
    finally:
        lib.close()


def test_a_worker_whose_window_has_gone_ends_quietly(tmp_path: Path) -> None:
    """The window or command that started the vectors worker ended first (a killed import,
    a crash): the worker's report finds no one listening; it ends without a traceback on the
    terminal (it printed a BrokenPipeError one), and what it stored stays."""
    from core.search import vector_worker
    from core.search.vectors import BookVectors

    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        book = import_book(lib, _text_book(tmp_path, "one.txt", 2_000)).book
        indexer_for(lib.db).stop()
        lib.db.execute_sql("DELETE FROM chunk_vectors")
        tries: list[object] = []

        def gone(message: object) -> None:  # the window has gone
            tries.append(message)
            raise BrokenPipeError(32, "Broken pipe")

        vector_worker.index_books(str(lib.db.database), [book.id], gone, "static")
        assert tries == [(book.id, "ok")] and BookVectors(lib.db).has(book.id)
    finally:
        lib.close()


def _worker(job: object) -> processes.PythonWorker:
    from core.search.vector_worker import FLAG

    return processes.PythonWorker("core.search.vector_worker", FLAG, job)


def _messages(worker: processes.PythonWorker) -> list[object]:
    messages = []
    while True:
        try:
            message = worker.receive(30)
        except EOFError:
            return messages
        assert message is not None, "the worker neither wrote nor ended in 30 s"
        messages.append(message)


def test_a_worker_whose_window_died_while_it_started_ends_at_once(tmp_path: Path) -> None:
    """The worker is told its window's pid (``exit_with_parent``): one whose window was
    killed before it ran (it was handed to another parent) ends without doing anything."""
    worker = _worker({"path": str(tmp_path / "none.sqlite3"), "parent": 1, "jobs": []})
    assert _messages(worker) == []
    worker.join(30)
    assert worker.exitcode == 1


def test_a_failing_worker_tells_the_log_not_the_terminal(tmp_path: Path) -> None:
    """Whatever fails in the worker comes back as a message for the window's log (with its
    traceback); the worker's stderr goes nowhere, so no traceback reaches a terminal."""
    worker = _worker({"path": str(tmp_path / "none.sqlite3"), "jobs": "not a list of jobs"})
    messages = _messages(worker)
    worker.join(30)
    assert worker.exitcode == 1
    assert len(messages) == 1 and isinstance(messages[0], list), messages
    kind, level, text = messages[0]
    assert kind == "log" and level >= 30
    assert "the vectors worker failed" in text and "Traceback" in text
