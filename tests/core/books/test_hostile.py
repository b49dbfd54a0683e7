"""Hostile files are refused early, with a clear sentence, without using much memory.

Each parse runs in a fresh subprocess that reports its peak memory (its own and its worker
processes': VmHWM and resource.getrusage of its children), with a generous address-space cap of its own so
a regression fails the test instead of the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.books.limits import Limits
from core.books.parse import parse_book
from core.errors import BookCode, BookError
from tests.core.books.hostilegen import MiB, fifo, pdf_with_bomb, sparse_file

ROOT = Path(__file__).resolve().parents[3]
PEAK_LIMIT_MB = 500

_RUNNER = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, resource.RLIM_INFINITY))
from pathlib import Path
from core.books import pdf
from core.books.limits import Limits
from core.books.parse import parse_book
from core.errors import BookError

if __name__ == "__main__":
    result = {"code": None, "message": ""}
    try:
        parse_book(Path(sys.argv[1]), limits=Limits(**json.loads(sys.argv[2])))
    except BookError as exc:
        result = {"code": str(exc.code), "message": exc.message}
    for _, pool in list(pdf._pools.values()):
        pool.shutdown(wait=True)
    # VmHWM, not RUSAGE_SELF: Linux starts a process's ru_maxrss at its parent's size when
    # it was forked, so under a large test worker every parse read as that worker's size
    own = next(
        int(line.split()[1])
        for line in open("/proc/self/status")
        if line.startswith("VmHWM:")
    )
    peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    result["peak_mb"] = peak / 1024
    print(json.dumps(result))
"""


def parse_isolated(path: Path, **limits: int) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(path), json.dumps(limits)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("name", ["huge.txt", "huge.md", "huge.html"])
def test_huge_text_files_are_refused_before_reading(tmp_path: Path, name: str) -> None:
    path = sparse_file(tmp_path / name, 500 * MiB)
    result = parse_isolated(path)
    assert result["code"] == BookCode.TOO_LARGE.value
    assert name in str(result["message"]) and "500.0 MB" in str(result["message"])
    assert float(str(result["peak_mb"])) < PEAK_LIMIT_MB


def test_text_over_the_page_budget_is_refused_while_counting(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    paragraph = "All work and no play makes a dull reader of books. " * 20
    path.write_text("\n\n".join([paragraph] * 4000), encoding="utf-8")  # ~4 MB
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_pages=200))
    assert err.value.code == BookCode.TOO_LARGE
    assert "more than 200 pages" in err.value.message
    md = tmp_path / "long.md"
    md.write_text("\n\n".join([paragraph] * 4000), encoding="utf-8")
    with pytest.raises(BookError) as err:
        parse_book(md, limits=Limits(max_pages=200))
    assert err.value.code == BookCode.TOO_LARGE


def test_pdf_deflate_bomb_is_refused_within_the_memory_cap(tmp_path: Path) -> None:
    path = pdf_with_bomb(tmp_path / "bomb.pdf", 3 * 1024 * MiB)
    assert path.stat().st_size < 4 * MiB
    result = parse_isolated(path)
    assert result["code"] in (BookCode.TOO_LARGE.value, BookCode.CORRUPT.value)
    assert "bomb.pdf" in str(result["message"])
    assert float(str(result["peak_mb"])) < PEAK_LIMIT_MB


def test_small_bomb_below_the_cap_still_reads(tmp_path: Path) -> None:
    """The cap is about memory, not about compression: 64 MB of spaces is read."""
    path = pdf_with_bomb(tmp_path / "puff.pdf", 64 * MiB)
    result = parse_isolated(path)
    # the page has no text at all: it opens (a page without text), not a memory refusal
    assert result["code"] is None


@pytest.mark.parametrize("name", ["pipe.txt", "pipe.epub", "pipe.pdf", "pipe.md"])
def test_fifo_is_refused_without_hanging(tmp_path: Path, name: str) -> None:
    path = fifo(tmp_path / name)
    result = parse_isolated(path)
    assert result["code"] == BookCode.UNSUPPORTED.value
    assert "not a regular file" in str(result["message"]) and name in str(result["message"])


def test_device_behind_a_book_name_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(BookError) as err:
        parse_book(link)
    assert err.value.code == BookCode.UNSUPPORTED
    assert "zero.txt is not a regular file" in err.value.message
