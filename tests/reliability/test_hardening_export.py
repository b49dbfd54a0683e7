"""Export is safe: terminal output sanitised, Markdown without raw HTML, scripts, unsafe
links or open fences, files written through a fresh temporary file, titles never paths
(issue 27, item 5)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.agent.types import AssistantMessage, Question, TextPart, Usage
from core.app import Margin
from core.books.importer import import_book
from core.export.markdown import (
    conversation_markdown,
    export_file_name,
    highlights_to_markdown,
    safe_answer,
    write_text_atomic,
)
from core.paths import resolve_paths
from tests.reliability.clirun import run

ESCAPES = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b31m"
HOSTILE_BOOK = (
    '<img src="http://tracker.example/p.png"> <script>alert(1)</script> '
    "[click](javascript:alert(1)) ![x](http://tracker.example/x.png) ```"
)
HOSTILE_ANSWER = (
    "Here is **bold**. <img src=http://tracker.example/a.png> <script>steal()</script>\n"
    "[safe](https://example.org) [bad](javascript:alert(1)) [worse]( JAVASCRIPT:x)\n"
    "![pic](http://tracker.example/b.png)\n"
    "[ref]: javascript:alert(2)\n"
    "```python\nprint('<b>kept in code</b>')\n"  # never closed
)


@pytest.fixture
def app(margin_home: Path) -> Iterator[Margin]:
    margin = Margin.open(resolve_paths().ensure())
    yield margin
    margin.close()


def _conversation(app: Margin, books_dir: Path) -> int:
    book = import_book(app.library, books_dir / "metamorphosis.epub").book
    app.db.execute_sql("UPDATE book SET title = ? WHERE id = ?", (f"Kafka {ESCAPES}", book.id))
    conv = app.conversations.create(book.id, "Hostile")
    store = app.conversations
    ids = store.start_run(
        conv.id,
        provider="anthropic",
        model="claude-test",
        strategy="tool-use",
        question=Question(f"What is {HOSTILE_BOOK}?"),
    )
    store.finish(
        conversation_id=conv.id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart(HOSTILE_ANSWER + ESCAPES, ()),)),
        text=HOSTILE_ANSWER + ESCAPES,
        citations=(),
        steps=1,
        usage=Usage(10, 5),
        stop_reason="end_turn",
        error=None,
    )
    return conv.id


def _no_active_markup(text: str) -> None:
    assert not re.search(r"(?<!\\)<(img|script|/script)", text, re.I), "no raw HTML"
    assert not re.search(r"(?<!\\)\]\(\s*javascript:", text, re.I)
    assert not re.search(r"(?<!\\)\]\(http://tracker", text), "no picture from the network"
    assert not re.search(r"^\s*\[[^\]]+\]:", text, re.M), "no reference link definitions"
    fences = [ln for ln in text.splitlines() if ln.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, "every code fence is closed"


def test_conversation_markdown_holds_no_active_markup(app: Margin, books_dir: Path) -> None:
    text = conversation_markdown(app, _conversation(app, books_dir))
    _no_active_markup(text)
    assert "**bold**" in text and "[safe](https://example.org)" in text
    assert "print('<b>kept in code</b>')" in text, "code blocks are left as they are"
    assert "\x1b" not in text and "\x9b" not in text


def test_quotes_are_escaped_blockquotes() -> None:
    import datetime as dt

    from core.store.library import BookInfo, HighlightRecord

    now = dt.datetime(2026, 1, 1)
    book = BookInfo(
        1, "T/../x", "", "", "epub", "a" * 64, "", "", 0, 1, 1, 1, False, "ready", now, None
    )
    quote = f"# Heading\n{HOSTILE_BOOK}\n> nested"
    highlight = HighlightRecord(1, 1, 2, quote, "<script>x</script>", "yellow", None, now)
    text = highlights_to_markdown(book, [highlight])
    _no_active_markup(text)
    quoted = [ln for ln in text.splitlines() if ln.startswith(">")]
    assert quoted[0] == "> \\# Heading" and quoted[2] == "> \\> nested"


def test_safe_answer_closes_fences_of_either_kind() -> None:
    assert safe_answer("~~~~\ncode").endswith("\n~~~~")
    assert safe_answer("```\na\n```\ntext <b>") == "```\na\n```\ntext &lt;b>"


def test_export_conversation_to_the_terminal_is_sanitised(tmp_path: Path, books_dir: Path) -> None:
    home = tmp_path / "home"
    margin = Margin.open(resolve_paths(str(home)).ensure())
    try:
        conv = _conversation(margin, books_dir)
    finally:
        margin.close()
    done = run(home, "export-conversation", str(conv))
    assert done.returncode == 0, done.stderr
    assert "Kafka" in done.stdout
    assert "\x1b" not in done.stdout and "\x9b" not in done.stdout and "\x07" not in done.stdout


def test_writing_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    target = tmp_path / "victim.txt"
    target.write_text("precious")
    out = tmp_path / "notes.md"
    (tmp_path / "notes.md.tmp").symlink_to(target)  # the old fixed temporary name
    own = tmp_path / "other.md.tmp"
    own.write_text("the reader's own file")
    write_text_atomic(out, "exported")
    write_text_atomic(tmp_path / "other.md", "exported")
    assert target.read_text() == "precious"
    assert own.read_text() == "the reader's own file"
    assert out.read_text() == "exported" and not out.is_symlink()
    link = tmp_path / "link.md"
    link.symlink_to(target)
    write_text_atomic(link, "exported")
    assert target.read_text() == "precious", "a symlink at the target is replaced, not followed"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["victim.txt", "notes.md", "notes.md.tmp", "other.md.tmp", "other.md", "link.md"]
    )


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from core.errors import MarginError
from core.export.markdown import write_text_atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # writes past 100 kB fail
try:
    write_text_atomic(Path(sys.argv[1]) / "out.md", "x" * 258_000)
except MarginError as exc:
    print(exc)
"""


def test_a_full_disk_leaves_nothing_behind(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = tmp_path / "out"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(folder)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert "disk is full" in done.stdout, done.stderr
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("title", ["../../etc/passwd", "a/b", "/abs", "..", ".hidden", "a\x00b"])
def test_a_title_never_moves_the_export_folder(tmp_path: Path, title: str) -> None:
    name = export_file_name(title, "highlights")
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert (tmp_path / name).parent == tmp_path
