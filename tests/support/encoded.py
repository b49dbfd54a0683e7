"""A library whose Metamorphosis has the sentence encoder's chunk vectors, computed once per
test run (about 25 s of CPU on two idle cores) and copied for each test that needs it.

The suite's parallel workers (pytest-xdist) share one copy: the first to ask builds it under
a file lock in the run's own temporary folder while the others wait, then each gets a copy
of its own (a real library folder, opened like any other). Without xdist the copy lives in
the run's folder. Nothing is kept from one run to the next: the vectors follow the code."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import BOOKS


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # under xdist each worker's folder is inside the run's own; alone, the run's is ours
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def encoded_home(factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A fresh copy of the library (its home folder): Alice imported first, then
    Metamorphosis, both with static vectors, Metamorphosis also with the encoder's. Returns
    (home, alice's id, Metamorphosis's id)."""
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.search.sentence_vectors import SentenceVectors
    from core.search.vectors import BookVectors
    from core.store.library import Library

    shared = _shared_root(factory) / "encoded-metamorphosis"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "ids").exists():
            shutil.rmtree(shared, ignore_errors=True)  # a build that failed half-way
            lib = Library.open(resolve_paths(shared / "home"))
            try:
                alice = import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id
                gregor = import_book(lib, BOOKS / "metamorphosis.epub").book.id
                for book_id in (alice, gregor):
                    assert BookVectors(lib.db).index_book(book_id)
                assert SentenceVectors(lib.db).index_book(gregor)
            finally:
                lib.close()
            (shared / "ids").write_text(f"{alice} {gregor}")
    alice, gregor = (int(n) for n in (shared / "ids").read_text().split())
    home = factory.mktemp("encoded") / "home"
    shutil.copytree(shared / "home", home)
    return home, alice, gregor
