"""A library in a read-only folder opens for reading (issue 27, item 7): the CLI reads and
says in words why it cannot write; the window opens and says so in a dialog, not only on
stderr. The folder is made read-only for real: a read-only bind mount in a private mount
namespace when running as root (root ignores permission bits), else the permission bits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.clirun import ROOT, env_for, run


def _read_only_command(home: Path, command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(home)], check=True)
        return command
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to make a read-only folder as root")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespaces here")
    quoted = " ".join(f"'{c}'" for c in command)
    mount = f"mount --bind '{home}' '{home}' && mount -o remount,bind,ro '{home}'"
    return ["unshare", "-m", "sh", "-c", f"{mount} && exec {quoted}"]


@pytest.fixture
def read_only_home(tmp_path: Path, books_dir: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    assert run(home, "import", str(books_dir / "metamorphosis.txt")).returncode == 0
    assert run(home, "notes", "1", "--add", "a note written before").returncode == 0
    yield home
    subprocess.run(["chmod", "-R", "u+w", str(home)], check=False)


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = _read_only_command(home, [sys.executable, "-m", "core.cli", *args])
    return subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=env_for(home), timeout=120
    )


def test_the_cli_reads_a_read_only_library(read_only_home: Path) -> None:
    for args, expected in (
        (("books",), "Metamorphosis"),
        (("notes", "1"), "a note written before"),
        (("search", "1", "Gregor"), "Gregor"),
    ):
        done = _run(read_only_home, *args)
        assert done.returncode == 0, done.stderr
        assert expected in done.stdout and done.stderr == "", done.stderr
    done = _run(read_only_home, "notes", "1", "--add", "new")
    assert done.returncode == 1
    assert "read-only" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


WINDOW = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from desktop import app as desktop_app

def look():
    names = [w.objectName() for w in QApplication.topLevelWidgets() if w.isVisible()]
    print("notice" if "read_only_notice" in names else f"no notice: {names}", flush=True)
    for w in QApplication.topLevelWidgets():
        w.close()
    QTimer.singleShot(500, lambda: [w.close() for w in QApplication.topLevelWidgets()])

app = QApplication(["Margin"])
QTimer.singleShot(4000, look)
sys.exit(desktop_app.window_main([]))
"""


def test_the_window_opens_a_read_only_library_and_says_so(read_only_home: Path) -> None:
    command = _read_only_command(read_only_home, [sys.executable, "-c", WINDOW])
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**env_for(read_only_home), "QT_QPA_PLATFORM": "offscreen"},
        timeout=120,
    )
    assert "notice" in done.stdout.splitlines(), (done.stdout, done.stderr)
    assert "cannot" not in done.stderr


def test_what_only_reads_works_on_a_read_only_library(read_only_home: Path) -> None:
    """Issue 46 item 12: X-Ray, the story so far and a conversation's export only read."""
    for args in (("xray", "1"), ("recap", "1"), ("export-conversation", "--book", "1")):
        done = _run(read_only_home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
