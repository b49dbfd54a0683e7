"""``margin import`` with protected PDFs: ``--password``, a prompt on a terminal (typed
without echo), and a clear message when the password is wrong or missing."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

from core.cli import main

ROOT = Path(__file__).resolve().parents[3]
PROTECTED = "libreoffice-writer-password.pdf"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_password_option_wrong_and_right(capsys: pytest.CaptureFixture[str], pdf_dir: Path) -> None:
    code, out, err = run(capsys, "import", "--password", "nope", str(pdf_dir / PROTECTED))
    assert code == 1 and "is wrong, so nothing was imported" in err and "nope" not in err
    code, out, err = run(capsys, "books", "--json")
    assert out.strip() == "[]"
    code, out, err = run(capsys, "import", "--password", "openpassword", str(pdf_dir / PROTECTED))
    assert code == 0, err
    assert "libreoffice-writer-password" in out and "1 pages" in out


def test_without_a_terminal_it_says_a_password_is_needed(
    capsys: pytest.CaptureFixture[str], pdf_dir: Path
) -> None:
    code, _, err = run(capsys, "import", str(pdf_dir / PROTECTED))
    assert code == 1 and "is protected by a password" in err


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_on_a_terminal_it_asks_for_the_password(pdf_dir: Path, margin_home: Path) -> None:
    """A real terminal (a pseudo-terminal): the prompt appears, the password typed is not
    echoed, and the book is imported."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: margin import on the terminal (exec at once after the fork)
        code = "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))"
        args = [sys.executable, "-c", code, "import", str(pdf_dir / PROTECTED)]
        os.execve(sys.executable, args, {**os.environ, "PYTHONPATH": str(ROOT)})
    seen = b""
    deadline = time.monotonic() + 60
    typed = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not typed and b"Password for" in seen:
            os.write(fd, b"openpassword\n")
            typed = True
    _, status = os.waitpid(pid, 0)
    text = seen.decode("utf-8", "replace")
    assert typed, text
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "openpassword" not in text, "the password is not echoed"
    assert "1 pages" in text


def test_reimport_of_a_protected_pdf_takes_its_password(
    capsys: pytest.CaptureFixture[str], pdf_dir: Path
) -> None:
    run(capsys, "import", "--password", "openpassword", str(pdf_dir / PROTECTED))
    code, _, err = run(capsys, "reimport", "libreoffice")
    assert code == 1 and "is protected by a password" in err
    code, out, err = run(capsys, "reimport", "libreoffice", "--password", "openpassword")
    assert code == 0 and "1 pages (was 1)" in out, err
