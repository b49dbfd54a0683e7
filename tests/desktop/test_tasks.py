"""The window's one pool: a lane runs bursty work there without taking every worker."""

from __future__ import annotations

import threading
import time

import pytest

from desktop.tasks import Lane, pool


def test_a_lane_runs_every_piece_in_order_never_more_than_its_limit_at_once() -> None:
    lane = Lane(2)
    lock = threading.Lock()
    running = 0
    most = 0
    done: list[int] = []
    finished = threading.Event()

    def piece(n: int) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
            done.append(n)
            if len(done) == 20:
                finished.set()

    for n in range(20):
        lane.submit(piece, n)
    assert finished.wait(30)
    assert most == 2  # two at once, the other workers stay free
    assert sorted(done) == list(range(20))
    # the pool's other threads were free all along: a read a reader waits for runs at once
    assert pool().submit(lambda: "read").result(timeout=5) == "read"


def test_a_failing_piece_is_logged_and_the_lane_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    lane = Lane(1)
    ran = threading.Event()

    def broken() -> None:
        raise ValueError("a damaged cover")

    lane.submit(broken)
    lane.submit(ran.set)
    assert ran.wait(10)
    assert "background work failed" in caplog.text
