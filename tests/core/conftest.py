"""Fixtures shared by the core tests: a real library in the test's own MARGIN_HOME."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.paths import resolve_paths
from core.store.library import Library


@pytest.fixture
def library() -> Iterator[Library]:
    """The library in this test's temp MARGIN_HOME (tests/conftest.py), closed after it."""
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()
