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
from tests.reliability.clirun import ROOT, env_for, imported, run, start, wait_for
from tests.support.pdfgen import book_pages, make_text_pdf

SOAK = os.environ.get("MARGIN_SOAK") == "1"
# tidies up in a loop (as every start of Margin does) until its stdin closes; says "ready"
# after the first round and how many rounds it made at the end
TIDY = (
    "import sys, threading, time\n"
    "from core.app import Margin\n"
    "from core.paths import resolve_paths\n"
    "stop = threading.Event()\n"
    "threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()\n"
    "rounds = 0\n"
    "while not stop.is_set():\n"
    "    app = Margin.open(resolve_paths())\n"
    "    app.tidy_up()\n"
    "    app.close()\n"
    "    rounds += 1\n"
    "    if rounds == 1:\n"
    "        print('ready', flush=True)\n"
    "    time.sleep(0.02)\n"
    "print(rounds)\n"
)


class Tidier:
    """Another process tidying up the data folder over and over while the test runs."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", TIDY],
            cwd=ROOT,
            env=env_for(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            _out, err = self.proc.communicate(timeout=60)
            raise AssertionError(f"the tidying process did not start: {err}")

    def stop(self) -> int:
        """Ends the loop; how many rounds of tidying it made."""
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return int(out.split()[-1])


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
    imported(home)  # an empty library
    for i in range(rounds()):
        tidy = Tidier(home)
        files = [pdf, *texts] if i == 0 else [pdf]
        done = run(home, "import", *map(str, files), timeout=120)
        assert tidy.stop() > 1, "it tidied while the books were imported"
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
    home = imported(tmp_path / "home", books_dir / "metamorphosis.txt")
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
            tidy = Tidier(home)
            assert run(home, "conversations", "1").returncode == 0  # recover_interrupted
            out, err = proc.communicate(timeout=60)
            assert tidy.stop() > 1
            assert proc.returncode == 0, err
            assert "complete answer" in out
        import sqlite3

        con = sqlite3.connect(home / "library.sqlite3")
        statuses = {s for (s,) in con.execute("SELECT status FROM run")}
        con.close()
        assert statuses == {"complete"}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_killed_import_leaves_nothing_for_long(
    tmp_path: Path, books_dir: Path, sig: signal.Signals
) -> None:
    """Item 8: SIGTERM cleans up at once; after SIGKILL, the next tidy-up (the window's, or
    the next 'margin import') removes the copy. Neither leaves a worker process behind."""
    import core.books.importer as importer

    home = tmp_path / "home"
    pdf = make_text_pdf(
        tmp_path / "big.pdf", book_pages(600, books_dir / "alice_in_wonderland.txt")
    )
    imported(home)  # an empty library
    proc = start(home, "import", str(pdf))
    wait_for(lambda: any((home / "books").glob(".importing-*")), timeout=60, step=0.01)
    workers = children(proc.pid)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    leftovers = list((home / "books").glob(".importing-*"))
    if sig == signal.SIGTERM:
        assert leftovers == []
    for left in leftovers:  # age them past the moment between creating and locking
        past = time.time() - importer.STALE_TEMP_S - 1
        os.utime(left, (past, past))
    done = run(home, "import", str(books_dir / "metamorphosis.txt"))
    assert done.returncode == 0, done.stderr
    assert list((home / "books").glob(".importing-*")) == []
    try:
        wait_for(lambda: not [p for p in workers if alive(p)], timeout=15)
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


PARENT = """
import sys, time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing
from core.store.owner import exit_with_parent

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=exit_with_parent)
    pool.submit(int).result()  # the worker is up, its initializer has run
    pool.submit(time.sleep, 120)
    print("ready", flush=True)
    time.sleep(120)
"""


def test_worker_ends_with_its_killed_parent(tmp_path: Path) -> None:
    """``owner.exit_with_parent`` as a pool initializer: a SIGKILLed parent leaves no worker
    blocked forever (core/books/pdf.py's pool should use it; see the report)."""
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env_for(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
    workers = children(parent.pid)
    assert workers
    parent.kill()
    parent.wait()
    wait_for(lambda: not [p for p in workers if alive(p)], timeout=10)


def test_a_worker_whose_parent_died_while_it_started_ends_at_once(tmp_path: Path) -> None:
    """The parent killed before the worker's initializer ran (a killed import, ~0.1 s after
    it spawned its PDF worker): the worker was handed to init, took init for its parent and
    waited forever. Told its parent's id, it sees the change and ends."""
    code = (
        "import os\n"
        "from core.store.owner import exit_with_parent\n"
        "exit_with_parent(os.getppid() + 1)  # not the parent it has now: its own died\n"
        "print('still here')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "still here" not in done.stdout
    ok = subprocess.run(
        [sys.executable, "-c", code.replace("os.getppid() + 1", "os.getppid()")],
        cwd=ROOT,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0 and "still here" in ok.stdout, ok.stderr
