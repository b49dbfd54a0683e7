"""The resource tracker is never stopped while a worker is being made (its semaphores would
be unlinked before the worker process opens them: issue 47's CI run failed that way)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.books import pdf
from core.processes import starting, stop_resource_tracker
from tests.conftest import PDFS


def test_stopping_the_tracker_waits_for_a_worker_being_made() -> None:
    stopped: list[bool] = []
    with starting():
        stopper = threading.Thread(target=lambda: stopped.append(stop_resource_tracker()))
        stopper.start()
        stopper.join(0.3)
        assert stopper.is_alive(), "the tracker was stopped while a worker was being made"
    stopper.join(10)
    assert not stopper.is_alive() and len(stopped) == 1


def test_pdf_text_is_read_while_another_thread_keeps_stopping_the_tracker() -> None:
    """The vectors worker ending (it stops the tracker) while a PDF's pool starts."""
    path = PDFS / "pdflatex-outline.pdf"
    done = threading.Event()

    def keep_stopping() -> None:
        while not done.is_set():
            stop_resource_tracker()

    stopper = threading.Thread(target=keep_stopping, daemon=True)
    stopper.start()
    try:
        for _ in range(4):
            pdf.shutdown_workers(wait=True)  # a fresh pool each time: the racy moment
            book = pdf.parse_pdf(Path(path))
            assert book.pages and any(page.text.strip() for page in book.pages)
    finally:
        done.set()
        stopper.join(10)
        pdf.shutdown_workers(wait=True)


@pytest.mark.parametrize(
    ("raw", "nice"), [("", 10), ("0", 0), ("5", 5), ("40", 19), ("-3", 0), ("soon", 10)]
)
def test_the_workers_priority_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, nice: int
) -> None:
    """MARGIN_WORKER_NICE sets how far a background worker lowers its priority (kept to
    0–19); a value that is not a number leaves the app's own (10)."""
    from core import processes

    monkeypatch.setenv("MARGIN_WORKER_NICE", raw)
    assert processes.worker_nice() == nice


def test_the_tracker_is_needed_while_a_child_process_lives() -> None:
    """The rule the tracker is stopped by: never while a process this one started lives."""
    import multiprocessing
    import time

    from core import processes

    child = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(30,))
    child.start()
    try:
        assert processes.tracker_needed()
        assert not processes.stop_resource_tracker()
    finally:
        child.terminate()
        child.join(10)
