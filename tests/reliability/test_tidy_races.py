"""Issue 17, item 3: start-up tidying races other processes. It must tidy only what is
stale — temporary copies of imports that are gone, answers whose process is gone — and never
what another live process owns. Real processes sharing one data folder; the normal run does
a couple of rounds, ``make soak`` many."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.paths import resolve_paths
from core.settings import Settings, save_settings
from core.store import models as m
from core.store.conversations import Conversations
from core.store.library import Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.reliability.clirun import ROOT, env_for, run, start, wait_for
from tests.support.pdfgen import book_pages, make_text_pdf

SOAK = os.environ.get("MARGIN_SOAK") == "1"
TIDY = (
    "import sys, time\n"
    "from core.app import Margin\n"
    "from core.paths import resolve_paths\n"
    "end = time.monotonic() + float(sys.argv[1])\n"
    "n = 0\n"
    "while time.monotonic() < end:\n"
    "    app = Margin.open(resolve_paths())\n"
    "    n += app.tidy_up()\n"
    "    app.close()\n"
    "    time.sleep(0.02)\n"
    "print(n)\n"
)


def tidier(home: Path, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", TIDY, str(seconds)],
        cwd=ROOT,
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_runs_of_live_processes_are_not_marked_interrupted() -> None:
    library = Library.open(resolve_paths())
    try:
        book = m.Book.create(title="B", format="txt", sha256="b" * 64, page_count=3)
        conversations = Conversations(library.db)
        conv = conversations.create(book.id)
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        here, now = socket.gethostname(), m.utcnow()
        rows = {
            "live": {"pid": sleeper.pid, "host": here, "started_at": now},
            "dead": {"pid": dead.pid, "host": here, "started_at": now},
            "legacy": {"pid": None, "host": "", "started_at": now},
            "old": {"pid": sleeper.pid, "host": here, "started_at": now - dt.timedelta(hours=3)},
            "elsewhere": {"pid": 1, "host": "another-machine", "started_at": now},
        }
        ids = {
            name: m.Run.create(conversation=conv.id, status="running", **fields).id
            for name, fields in rows.items()
        }
        try:
            assert conversations.recover_interrupted() == 3
        finally:
            sleeper.kill()
            sleeper.wait()
        status = {name: m.Run.get_by_id(i).status for name, i in ids.items()}
        assert status == {
            "live": "running",
            "dead": "interrupted",
            "legacy": "interrupted",
            "old": "interrupted",
            "elsewhere": "running",
        }
        assert conversations.recover_interrupted() == 1  # now the sleeper is gone too
    finally:
        library.close()


def rounds() -> int:
    return 6 if SOAK else 1


def test_tidy_up_in_other_processes_never_breaks_an_import(tmp_path: Path, books_dir: Path) -> None:
    """Imports in one process while another process tidies up in a loop: every import
    completes (its temporary copy is locked, so never taken away)."""
    home = tmp_path / "home"
    pdf = make_text_pdf(
        tmp_path / "big.pdf", book_pages(120, books_dir / "alice_in_wonderland.txt")
    )
    texts = [books_dir / "alice_in_wonderland.txt", books_dir / "metamorphosis.txt"]
    run(home, "books")
    for i in range(rounds()):
        tidy = tidier(home, 8)
        time.sleep(0.3)
        files = [pdf, *texts] if i == 0 else [pdf]
        done = run(home, "import", *map(str, files), timeout=120)
        _out, err = tidy.communicate(timeout=60)
        assert tidy.returncode == 0, err
        assert done.returncode == 0, done.stderr
        books = home / "books"
        assert not [p for p in books.iterdir() if p.name.startswith(".importing-")]
        if i < rounds() - 1:
            assert run(home, "delete", "big", "--yes").returncode == 0


def test_tidy_up_in_other_processes_never_interrupts_a_live_answer(
    tmp_path: Path, books_dir: Path
) -> None:
    """A slow answer in one process while other processes start (each tidies up): the
    answer finishes "complete", never marked "interrupted" under it."""
    home = tmp_path / "home"
    assert run(home, "import", str(books_dir / "metamorphosis.txt")).returncode == 0
    with FakeAnthropic() as fake:
        save_settings(
            resolve_paths(home),
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
        )
        for _ in range(rounds()):
            fake.add(
                Reply.text(
                    "A slow and complete answer. " * 40, chunk_chars=10, tokens_per_second=60
                )
            )
            proc = start(home, "ask", "1", "Slowly, please.")
            wait_for(lambda: any(r.first_byte_at for r in fake.message_requests[-1:]), timeout=30)
            tidy = tidier(home, 2)
            assert run(home, "conversations", "1").returncode == 0  # recover_interrupted
            tidy.communicate(timeout=60)
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert "complete answer" in out
        import sqlite3

        con = sqlite3.connect(home / "library.sqlite3")
        statuses = {s for (s,) in con.execute("SELECT status FROM run")}
        con.close()
        assert statuses == {"complete"}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_killed_import_leaves_a_copy_the_next_tidy_up_removes(
    tmp_path: Path, books_dir: Path, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    pdf = make_text_pdf(
        tmp_path / "big.pdf", book_pages(300, books_dir / "alice_in_wonderland.txt")
    )
    run(home, "books")
    proc = start(home, "import", str(pdf))
    wait_for(lambda: any((home / "books").glob(".importing-*")), timeout=60, step=0.01)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    time.sleep(0.2)
    import core.books.importer as importer

    leftovers = list((home / "books").glob(".importing-*"))
    for left in leftovers:  # age them past the moment between creating and locking
        past = time.time() - importer.STALE_TEMP_S - 1
        os.utime(left, (past, past))
    tidy = tidier(home, 0.01)
    out, _ = tidy.communicate(timeout=60)
    assert list((home / "books").glob(".importing-*")) == []
    assert int(out) >= len(leftovers)
