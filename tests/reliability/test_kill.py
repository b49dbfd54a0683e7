"""Nothing committed is lost when the process is killed (SIGKILL) at a random moment: while an
answer streams, while a book imports, while a note is saved. Real CLI subprocesses, a real
SQLite file, the fake Anthropic server in this process.

The normal run does a handful of kills; ``make soak`` (``-m soak``) does many more."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.reliability.clirun import imported, wait_for
from tests.support.pdfgen import book_pages, make_text_pdf

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-kill-test-key"


def cli(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update({"MARGIN_HOME": str(home), "ANTHROPIC_API_KEY": KEY})
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = cli(home, *args)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def check_database(home: Path) -> sqlite3.Connection:
    con = sqlite3.connect(home / "library.sqlite3")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.execute(
        "INSERT INTO chunk_index(chunk_index) VALUES('integrity-check')"
    )  # FTS index matches
    for book_id, pages, status in con.execute("SELECT id, page_count, status FROM book"):
        assert status == "ready", "no half book"
        assert (
            con.execute("SELECT count(*) FROM page WHERE book_id = ?", (book_id,)).fetchone()[0]
            == pages
        )
    return con


ANSWER_MOMENTS = ("starting", "asked", "streaming")
IMPORT_MOMENTS = ("reading", "writing")


def kill_moment(fake: FakeAnthropic, before: int, moment: str, rng: random.Random) -> None:
    """Wait for one of the moments that matter in an answer's life, and a random bit more:
    while the command starts (the question not saved yet, or just saved), as the request
    reaches the server, or while the answer streams (and is saved as it goes)."""
    if moment == "asked":
        wait_for(lambda: len(fake.message_requests) > before, timeout=60, step=0.01)
    elif moment == "streaming":
        wait_for(
            lambda: any(r.first_byte_at for r in fake.message_requests[before:]),
            timeout=60,
            step=0.01,
        )
    time.sleep(rng.uniform(0.0, 0.6))


def kill_answers(home: Path, fake: FakeAnthropic, kills: int, rng: random.Random) -> None:
    for i in range(kills):
        fake.add(Reply.text("Slowly, word by word, " * 200, chunk_chars=6, tokens_per_second=80))
        before = len(fake.message_requests)
        proc = cli(home, "ask", "1", f"Question number {i}?")
        kill_moment(fake, before, ANSWER_MOMENTS[i % len(ANSWER_MOMENTS)], rng)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        con = check_database(home)
        questions = con.execute(
            "SELECT text, status FROM message WHERE kind = 'question'"
        ).fetchall()
        assert all(status == "complete" for _, status in questions)
        assert [q for q, _ in questions] == sorted(
            (q for q, _ in questions), key=lambda t: int(t.split()[2].rstrip("?"))
        ), "in order"
        con.close()


def kill_imports(home: Path, pdf: Path, kills: int, rng: random.Random) -> None:
    """Kill while the book is read (parsed in worker processes) or while it is written (its
    temporary copy is there: the one transaction of pages, chunks and index is under way)."""
    books = home / "books"
    for i in range(kills):
        earlier = set(books.glob(".importing-*"))  # left by an earlier kill
        proc = cli(home, "import", str(pdf))
        if IMPORT_MOMENTS[i % len(IMPORT_MOMENTS)] == "reading":
            time.sleep(rng.uniform(0.05, 0.5))
        else:
            wait_for(partial(new_copy, books, earlier), timeout=60, step=0.01)
            time.sleep(rng.uniform(0.0, 0.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        check_database(home).close()


def new_copy(books: Path, earlier: set[Path]) -> bool:
    return bool(set(books.glob(".importing-*")) - earlier)


def kill_notes(home: Path, kills: int, rng: random.Random) -> None:
    for i in range(kills):
        proc = cli(home, "notes", "1", "--add", f"note {i}")
        time.sleep(rng.uniform(0.1, 0.8))  # starting, saving, or done
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        con = check_database(home)
        assert all(text.startswith("note ") for (text,) in con.execute("SELECT text FROM note"))
        con.close()


def scenario(
    tmp_path: Path, books_dir: Path, answer_kills: int, import_kills: int, note_kills: int
) -> None:
    home = tmp_path / "home"
    rng = random.Random(20261122)
    imported(home, books_dir / "alice_in_wonderland.epub")
    with FakeAnthropic() as fake:
        save_settings(
            resolve_paths(home),
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
        )
        kill_answers(home, fake, answer_kills, rng)
        # the next start marks interrupted answers instead of leaving them "running"
        assert run(home, "conversations", "1").returncode == 0
        con = check_database(home)
        statuses = {s for (s,) in con.execute("SELECT status FROM message WHERE kind = 'answer'")}
        assert "running" not in statuses
        assert con.execute("SELECT count(*) FROM run WHERE status = 'running'").fetchone()[0] == 0
        con.close()
        # and the next question works (replies of kills that came before the request are dropped)
        streamed = sum(1 for r in fake.message_requests if r.first_byte_at is not None)
        print(f"{answer_kills} answer kills, {streamed} of them after the answer started streaming")
        fake.script.clear()
        fake.add(Reply.text("After all that, a complete answer."))
        done = run(home, "ask", "1", "Does it still work?")
        assert done.returncode == 0 and "a complete answer" in done.stdout
    pdf = make_text_pdf(
        tmp_path / "big.pdf", book_pages(300, books_dir / "alice_in_wonderland.txt")
    )
    kill_imports(home, pdf, import_kills, rng)
    kill_notes(home, note_kills, rng)
    done = run(home, "import", str(pdf))
    assert done.returncode == 0, done.stderr
    con = check_database(home)
    assert con.execute("SELECT count(*) FROM book WHERE title = 'big'").fetchone()[0] == 1
    con.close()


def test_kills_lose_nothing_committed(tmp_path: Path, books_dir: Path) -> None:
    scenario(tmp_path, books_dir, answer_kills=5, import_kills=2, note_kills=1)


@pytest.mark.soak
def test_many_kills_lose_nothing_committed(tmp_path: Path, books_dir: Path) -> None:
    scenario(tmp_path, books_dir, answer_kills=20, import_kills=8, note_kills=4)
