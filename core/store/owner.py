"""Which process owns something in the data folder, and whether that process is gone.

Several Margin processes may share one library (the window and CLI commands). Start-up
tidying touches only what a process that no longer exists left behind: answers record the
pid and host of their process (``run.pid``, ``run.host``), and an import holds an exclusive
``flock`` on its temporary copy for as long as it runs.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

# No answer runs longer than this (the per-question deadline is minutes): an older run
# is stale even when its pid has been reused by another process.
MAX_ANSWER_AGE = dt.timedelta(hours=2)


def host() -> str:
    import socket  # (only where an answer is recorded: ``margin import`` never loads it)

    return socket.gethostname()


def process_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this machine."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OverflowError:
        return False
    return True


def run_is_orphaned(
    pid: int | None, run_host: str, started_at: dt.datetime, now: dt.datetime
) -> bool:
    """Whether a run still marked "running" was left by a process that is gone."""
    if now - started_at > MAX_ANSWER_AGE:
        return True
    if pid is None or not run_host:
        return True  # written before runs recorded their process (schema < 5)
    if run_host != host():
        return False  # another machine sharing the folder: only age can tell
    return not process_alive(pid)


def is_cli_answer(pid: int) -> bool:
    """Whether ``pid`` is a ``margin ask``/``margin chat`` command (it stops on SIGINT and
    keeps what was written); never true for the window."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [a.decode("utf-8", "replace") for a in args if a]
    cli = any(w.endswith(("core.cli", "margin")) or "core/cli" in w for w in words)
    return cli and any(w in ("ask", "chat") for w in words)


def lock_file(path: Path) -> int:
    """Open ``path`` and take an exclusive ``flock`` on it; returns the descriptor (closing it
    releases the lock, and so does the process ending, however it ends)."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def is_locked(path: Path) -> bool:
    """Whether another process holds the ``flock`` of ``path`` (a live import's copy)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases the lock we may just have taken
    return False


def exit_with_parent(parent: int | None = None) -> None:
    """For a worker process (a ``ProcessPoolExecutor`` initializer): end when the process
    that started it ends, however it ends (a SIGKILL runs no clean-up in the parent, and a
    worker blocked writing its result to the dead parent would otherwise wait forever).
    Linux: the kernel sends SIGKILL on the parent's death; elsewhere a thread checks.
    ``parent``, the starting process's id: one killed while this worker was still starting
    (its initializer runs ~0.1 s after the spawn) is caught too; without it the worker took
    the process it had been handed to (init) for its parent and waited forever (a worker of
    tests/reliability/test_kill.py's killed import was left so)."""
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="margin-parent-watch", daemon=True).start()


def first_job() -> dict[str, Any] | None:
    """In a worker process (``core.processes.PythonWorker``): its first job, once the worker
    ends with its window (the job's ``parent``: a killed window leaves no worker) and runs
    below the window's priority; None when its input ended before any job."""
    from core.processes import lower_priority, worker_job

    job = worker_job()
    if not isinstance(job, dict):
        return None
    exit_with_parent(job.get("parent"))
    lower_priority()
    return job
