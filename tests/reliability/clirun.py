"""Running the real ``margin`` CLI in a subprocess against a data folder (test helper)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-harden-test-key-0123456789"


def env_for(home: Path, key: str | None = KEY, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["MARGIN_HOME"] = str(home)
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    env.update(extra)
    return env


def start(home: Path, *args: str, key: str | None = KEY, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", *args],
        cwd=ROOT,
        env=env_for(home, key, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
    )


def run(
    home: Path, *args: str, timeout: float = 60, key: str | None = KEY, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end; a hang fails the test (``TimeoutExpired``)."""
    proc = start(home, *args, key=key, **extra)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def imported(home: Path, *books: Path) -> Path:
    """``home`` with ``books`` imported, in this process: a quarter of the time of a
    ``margin import`` run, for the tests that are about what comes after."""
    from core.app import Margin
    from core.paths import resolve_paths

    app = Margin.open(resolve_paths(home).ensure())
    try:
        for book in books:
            app.import_book(book)
    finally:
        app.close()
    return home


def wait_for(check: object, timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(step)
    raise AssertionError("condition not reached in time")
