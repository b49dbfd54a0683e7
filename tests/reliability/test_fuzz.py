"""Property-based fuzzing of the importers with mutated real fixtures: never a crash or a
hang, always a ``BookError`` or a valid book. More examples run under ``make soak``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.books.limits import Limits
from core.books.parse import parse_book
from core.errors import BookError
from tests.conftest import BOOKS, PDFS

SOAK = os.environ.get("MARGIN_SOAK") == "1"
EXAMPLES = 400 if SOAK else 40
PER_FILE_SECONDS = 5.0
LIMITS = Limits(
    max_file_bytes=8 * 1024 * 1024, max_uncompressed_bytes=32 * 1024 * 1024, max_pages=2000
)

FIXTURES = {
    "epub": (BOOKS / "test_rich_metadata.epub").read_bytes(),
    "epub-big": (BOOKS / "metamorphosis.epub").read_bytes(),
    "pdf": (PDFS / "pdflatex-outline.pdf").read_bytes(),
    "txt": (BOOKS / "alice_in_wonderland.txt").read_bytes()[:20000],
}
SUFFIX = {"epub": ".epub", "epub-big": ".epub", "pdf": ".pdf", "txt": ".txt"}


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> bytes:
    data = bytearray(FIXTURES[kind])
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["flip", "cut", "insert", "duplicate", "zero"]))
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        if action == "flip":
            data[pos] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[pos : pos + draw(st.integers(1, 4096))]
        elif action == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=64))
        elif action == "duplicate":
            end = min(len(data), pos + draw(st.integers(1, 2048)))
            data[pos:pos] = data[pos:end]
        else:
            end = min(len(data), pos + draw(st.integers(1, 512)))
            data[pos:end] = bytes(end - pos)
    return bytes(data)


def check(tmp: Path, kind: str, data: bytes) -> None:
    path = tmp / f"fuzz{SUFFIX[kind]}"
    path.write_bytes(data)
    started = time.perf_counter()
    try:
        book = parse_book(path, limits=LIMITS)
    except BookError as exc:
        assert exc.code and path.name in exc.message, f"the message names the file: {exc.message}"
    else:
        assert book.pages and all(p.number == i + 1 for i, p in enumerate(book.pages))
        assert all(1 <= t.page <= len(book.pages) for t in book.toc)
    assert time.perf_counter() - started < PER_FILE_SECONDS


@pytest.mark.parametrize("kind", list(FIXTURES))
def test_mutated_fixtures(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp(f"fuzz-{kind}")

    @settings(
        max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(mutated(kind))
    def run(data: bytes) -> None:
        check(tmp, kind, data)

    run()
