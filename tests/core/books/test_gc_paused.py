"""The collector pause around parsing (core.books.memory.gc_paused): on the main thread (the
command line's import) collection is off while a book is parsed and back on after; on a
worker thread (the window's imports) the process-wide switch is left alone."""

from __future__ import annotations

import gc
import threading

from core.books.memory import gc_paused


def test_the_main_thread_pauses_collection_and_turns_it_back_on() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the outer one turns it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collection_comes_back_after_an_error() -> None:
    try:
        with gc_paused():
            raise ValueError("a broken book")
    except ValueError:
        pass
    assert gc.isenabled()


def test_a_worker_thread_leaves_collection_on() -> None:
    seen: list[bool] = []

    def work() -> None:
        with gc_paused():
            seen.append(gc.isenabled())

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(10)
    assert seen == [True]
    assert gc.isenabled()
