"""Issue 17, item 7: book titles, authors, page text and model answers with terminal escape
sequences (CSI, OSC 52 which sets the clipboard, C1 controls) are never printed raw by
``books``, ``show``, ``page``, ``search``, ``ask``, ``history`` or their ``--json``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from core.cli.context import clean
from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.reliability.clirun import imported, run

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # would put "rm -rf ~" on the clipboard
CSI = "\x1b[2J\x1b[31m"
C1 = "\x9b31m\x9d0;title\x9c"
HOSTILE = f"Wonder{OSC52}land{CSI}{C1}"
CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + [
    chr(c) for c in range(0x7F, 0xA0)
]


def assert_no_controls(text: str) -> None:
    found = sorted({repr(ch) for ch in text if ch in CONTROLS})
    assert not found, found


def strings(value: object) -> list[str]:
    """Every string in decoded JSON: JSON keeps the exact text, escaped."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_clean_keeps_text_newlines_and_tabs() -> None:
    assert clean("a\tb\nc\x1b[2Jd\x07e\x9bf\ud800g") == "a\tb\nc[2Jde f\ufffdg".replace(" ", "")


@pytest.fixture
def hostile_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    book = tmp_path / "hostile.txt"
    body = "\n\n".join(
        f"Paragraph {i}: the white rabbit ran {HOSTILE} past the hedge." for i in range(60)
    )
    book.write_text(body, encoding="utf-8")
    imported(home, book)
    con = sqlite3.connect(home / "library.sqlite3")
    con.execute("UPDATE book SET title = ?, author = ?", (f"Title {HOSTILE}", f"By {HOSTILE}"))
    con.execute("UPDATE toc_entry SET title = ?", (f"Chapter {HOSTILE}",))
    con.commit()
    con.close()
    return home


@pytest.mark.parametrize(
    "args",
    [
        ("books",),
        ("show", "1"),
        ("page", "1", "1"),
        ("search", "1", "rabbit"),
        ("books", "--json"),
        ("show", "1", "--json"),
        ("page", "1", "1", "--json"),
        ("search", "1", "rabbit", "--json"),
    ],
    ids=lambda a: " ".join(a),
)
def test_library_commands_print_no_controls(hostile_home: Path, args: tuple[str, ...]) -> None:
    done = run(hostile_home, *args)
    assert done.returncode == 0, done.stderr
    assert "Wonder" in done.stdout
    assert_no_controls(done.stdout)
    assert_no_controls(done.stderr)
    if "--json" in args:
        assert any("\x1b]52" in text for text in strings(json.loads(done.stdout)))


def test_ask_and_history_print_no_controls(hostile_home: Path) -> None:
    with FakeAnthropic() as fake:
        save_settings(
            resolve_paths(hostile_home),
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
        )
        fake.add(Reply.text(f"The answer is {HOSTILE} and nothing else."))
        done = run(hostile_home, "ask", "1", "What is it?")
        assert done.returncode == 0, done.stderr
        assert "The answer is Wonder" in done.stdout
        assert_no_controls(done.stdout)
        history = run(hostile_home, "history", "1")
        assert "The answer is Wonder" in history.stdout
        assert_no_controls(history.stdout)
        listing = run(hostile_home, "conversations", "1")
        assert_no_controls(listing.stdout)
