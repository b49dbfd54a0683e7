"""``MARGIN_STARTUP_TIMING=1``: say on stderr when the main window has first been painted.

A user waits from the moment the program is launched, not from the moment ``desktop/app.py``
starts a timer (that misses the interpreter's start and the first imports: 0.1–0.4 s). So the
line carries the wall-clock time of the first paint (``time.time_ns()``); the benchmark
(tests/bench/bench_startup.py) and the smoke test (packaging/smoke.sh) subtract the time
they launched the process at.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

MARKER = "margin: first paint at"


class _FirstPaint(QObject):
    def __init__(self, window: QWidget, started: float) -> None:
        super().__init__(window)
        self.window = window
        self.started = started

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            report(self.started)
            self.window.removeEventFilter(self)
        return False


def report(started: float) -> None:
    inside = (time.perf_counter() - started) * 1000
    print(
        f"{MARKER} {time.time_ns()} ns (window shown after {inside:.0f} ms, "
        f"{time.process_time() * 1000:.0f} ms of CPU since the process started)",
        file=sys.stderr,
        flush=True,
    )


def watch_first_paint(window: QWidget, started: float) -> None:
    """Print ``MARKER`` once, when ``window`` is first painted; ``started`` is the
    in-process timer (``time.perf_counter()`` at the top of ``desktop/app.py``)."""
    window.installEventFilter(_FirstPaint(window, started))


class _AfterPaint(QObject):
    def __init__(self, widget: QWidget, callback: Callable[[], object]) -> None:
        super().__init__(widget)
        self.widget = widget
        self.callback = callback

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.widget.removeEventFilter(self)
            QTimer.singleShot(0, self.callback)
        return False


def after_first_paint(widget: QWidget, callback: Callable[[], object]) -> None:
    """Run ``callback`` once ``widget`` has been painted for the first time: work that can
    wait (the keyring look-up, ~140 ms) never delays the first frame the reader sees."""
    widget.installEventFilter(_AfterPaint(widget, callback))
