"""After an import, no idle PDF worker or resource tracker stays behind, and freed memory is
handed back (issue 27, item 9). Each case runs in a fresh process so its children can be
counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, os, sys, tempfile, time
from pathlib import Path
from core.books import pdf
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library

def children():
    out = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        out += (task / "children").read_text().split()
    return len(out)

pdf.IDLE_S = 1.0  # the app waits a few seconds; the test need not
with tempfile.TemporaryDirectory() as home:
    lib = Library.open(resolve_paths(home))
    import_book(lib, Path(sys.argv[1]))
    during = children()
    deadline = time.monotonic() + 30  # (a loaded machine is slow to end them)
    while children() and time.monotonic() < deadline:
        time.sleep(0.1)
    after = children()
    import_book(lib, Path(sys.argv[2]))  # and they start again for the next PDF
    again = len(lib.list_books())
    lib.close()
print(json.dumps({"during": during, "after": after, "again": again}))
"""


def test_no_idle_workers_after_a_pdf_import(pdf_dir: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(pdf_dir / "pdflatex-4-pages.pdf"),
            str(pdf_dir / "multicolumn.pdf"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["during"] >= 2, "a worker and the resource tracker ran the import"
    assert result["after"] == 0, (result, done.stderr)
    assert result["again"] == 2


def test_memory_is_given_back() -> None:
    from core.books.memory import give_back_memory

    assert give_back_memory() is (sys.platform.startswith("linux") and _glibc())


def _glibc() -> bool:
    import platform

    return platform.libc_ver()[0] == "glibc"
