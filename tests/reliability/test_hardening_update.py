"""While one process updates the library's schema, another waits for it, says so, and then
does its work (issue 27, item 4): no "busy for more than 15 seconds", no lost note."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.store.migrations import SCHEMA_VERSION
from tests.reliability.clirun import ROOT, env_for, run

# A process that updates the library slowly: its last schema step writes, then holds the
# update's transaction for a while (as a large library's update does).
SLOW_UPDATE = """
import sys, time
from core.paths import resolve_paths
from core.store import migrations
from core.store.library import Library

def slow(db):
    db.execute_sql("CREATE TABLE IF NOT EXISTS slow_probe (x)")
    print("updating", flush=True)
    time.sleep(4)

migrations.MIGRATIONS = migrations.MIGRATIONS[:-1] + (slow,)
Library.open(resolve_paths(sys.argv[1])).close()
print("updated", flush=True)
"""


def library_of_the_previous_version(home: Path, books_dir: Path) -> None:
    assert run(home, "import", str(books_dir / "metamorphosis.txt")).returncode == 0
    with sqlite3.connect(home / "library.sqlite3") as con:
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")


@contextmanager
def slow_update(home: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_UPDATE, str(home)],
        cwd=ROOT,
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "updating", proc.stderr.read()  # type: ignore[union-attr]
        yield proc
    finally:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err


def test_a_command_waits_for_an_update_and_keeps_the_note(tmp_path: Path, books_dir: Path) -> None:
    home = tmp_path / "home"
    library_of_the_previous_version(home, books_dir)
    with slow_update(home):
        done = run(home, "notes", "1", "--add", "written while the library was updating")
    assert done.returncode == 0, done.stderr
    assert "updating the library" in done.stderr and "waiting" in done.stderr
    assert "busy" not in done.stderr
    assert "written while the library was updating" in run(home, "notes", "1").stdout
    with sqlite3.connect(home / "library.sqlite3") as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
