"""A PDF text worker that cannot start is reported as that, not as a memory problem or a
damaged book (issue 27, item 7). Each case runs in its own process: a broken worker
executable also breaks that process's multiprocessing resource tracker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, multiprocessing, sys, warnings
warnings.simplefilter("ignore")
from pathlib import Path
from core.books import pdf
from core.errors import BookError

multiprocessing.get_context("spawn").set_executable(sys.argv[1])
out = {}
try:
    pdf.parse_pdf(Path(sys.argv[2]))
    out["first"] = "read"
except BookError as exc:
    out["first"] = [exc.code, str(exc)]
multiprocessing.get_context("spawn").set_executable(sys.executable)
pdf.shutdown_workers()
out["again"] = len(pdf.parse_pdf(Path(sys.argv[2])).pages)
pdf.shutdown_workers()
print(json.dumps(out))
"""


@pytest.mark.parametrize("executable", ["/nonexistent/python3", "/bin/false"])
def test_a_worker_that_cannot_start_says_so(pdf_dir: Path, executable: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, executable, str(pdf_dir / "pdflatex-4-pages.pdf")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    code, message = result["first"]
    assert code == "worker_failed", message
    assert "could not start" in message
    assert "memory" not in message and "damaged" not in message
    assert result["again"] == 4, "workers start again once they can"
