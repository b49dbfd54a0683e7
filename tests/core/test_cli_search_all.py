"""The read-only ``margin search --all`` (core/cli/search_all.py): the standard sqlite3 module
alone, the same output as the full command, and the full command whenever it cannot answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import _quick, _run, main
from core.cli.search_all import database_path, parse

ROOT = Path(__file__).resolve().parents[2]


def both(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    """The output of the read-only path and of the full command for ``args``."""
    code = _quick(list(args))
    quick, _ = capsys.readouterr()
    assert code == 0, f"the read-only path did not answer {args}"
    assert _run(list(args)) == 0
    full, _ = capsys.readouterr()
    return quick, full


def test_the_read_only_path_prints_what_the_full_command_prints(
    capsys: pytest.CaptureFixture[str], books_dir: Path, tmp_path: Path
) -> None:
    files = []
    for name in ("alice_in_wonderland.txt", "metamorphosis.txt"):  # their first 40,000
        files.append(tmp_path / name)  # characters: Gutenberg's header and a few chapters
        files[-1].write_text((books_dir / name).read_text(encoding="utf-8")[:40_000])
    assert main(["import", *map(str, files)]) == 0
    assert main(["read-to", "alice", "5"]) == 0
    capsys.readouterr()
    for args in (
        ("sister",),
        ("sister", "--beyond-read"),
        ("sister", "--json"),
        ("sister", "--beyond-read", "--json", "--limit", "2"),
        ('"white rabbit"', "--beyond-read"),
        ("Gregor", "father"),  # two words given apart are one query
        ("the", "--limit=3"),  # stop words only
        ("Project Gutenberg license", "--beyond-read"),  # front matter left out
        ("zzzqqq",),
        ("猫",),
    ):
        quick, full = both(capsys, "search", "--all", *args)
        assert quick == full, args
    quick, full = both(capsys, "search", "--all", "sister", "--beyond-read")
    assert "Alice" in quick and "Metamorphosis" in quick and "«" in quick


def test_the_full_command_answers_what_the_read_only_path_does_not(
    capsys: pytest.CaptureFixture[str], margin_home: Path
) -> None:
    assert _quick(["search", "--all", "Gregor"]) is None  # no library yet: the full one makes it
    assert main(["search", "--all", "Gregor"]) == 0
    assert "No passages" in capsys.readouterr()[0]
    for args in (
        ["search", "--all", "Gregor", "--until-page", "3"],  # the full command's error
        ["search", "--all", "--beyond", "Gregor"],  # argparse's abbreviation
        ["search", "--all", "--limit", "0", "Gregor"],
        ["search", "--all", "a", "b", "c"],
        ["search", "--all"],
        ["search", "Gregor", "x"],  # one book
        ["--version", "search", "--all", "x"],
    ):
        assert parse(args) is None or "--all" not in args, args
        assert _quick(args) is None, args
    (margin_home / "library.sqlite3").write_bytes(b"not a database" * 100)
    assert _quick(["search", "--all", "Gregor"]) is None
    assert main(["search", "--all", "Gregor"]) == 1
    assert "damaged" in capsys.readouterr()[1]


def test_the_library_file_is_the_one_the_app_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.paths import resolve_paths

    assert database_path(str(tmp_path / "x")) == resolve_paths(tmp_path / "x").database
    assert database_path(None) == resolve_paths(None).database  # MARGIN_HOME
    monkeypatch.delenv("MARGIN_HOME")
    assert database_path(None) == resolve_paths(None).database  # the user data folder


def test_searching_the_library_loads_neither_peewee_nor_dataclasses(
    capsys: pytest.CaptureFixture[str], books_dir: Path, margin_home: Path
) -> None:
    """Issue 41: the whole process within 3× the interpreter's start-up
    (tests/bench/bench_cli_search.py); what it must not import is checked here (argparse,
    json and signal too: 4 ms together, a tenth of the command)."""
    assert main(["import", str(books_dir / "metamorphosis.txt")]) == 0
    capsys.readouterr()
    code = (
        "import sys; from desktop.app import main; code = main(sys.argv[1:]); "
        "print(sorted(m for m in ('peewee', 'dataclasses', 'asyncio', 'logging', 'PySide6', "
        "'argparse', 'json', 'signal') if m in sys.modules)); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "search", "--all", "Gregor", "--beyond-read"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MARGIN_HOME": str(margin_home)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Metamorphosis" in done.stdout and "«Gregor»" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"
