"""When Python's garbage collector may pause the window.

A full collection walks every object the process tracks: with Qt's bindings, the Anthropic
SDK and a long conversation loaded that is over 200,000 objects, and one pass took 107 ms of
CPU on the bench machine (``tests/bench/bench_chat.py`` run under a ``gc.callbacks`` probe).
When it falls while an answer streams in, the window stalls that long. Almost all of those
objects are made at start-up (modules, classes, widgets) and live as long as the app, so:

- once the window is built, they are frozen: moved out of the collector's reach, so later
  collections walk only what was made since;
- when the reader has left the window alone for a few seconds and no answer is streaming,
  everything is thawed, collected (the pause falls where nobody is looking) and frozen
  again: the SDK, loaded at the first question, joins the frozen objects then, and a closed
  book's widgets that were frozen while open are collected. The first such collection may
  come 10 s after start-up, later ones at most once a minute.

So nothing that becomes garbage stays frozen past the next idle moment.

The sentence encoder (deep search's, ~20 MB once a question has loaded it) is let go at an
idle collection when no question used it for ``ENCODER_IDLE_SECONDS``; the next question
loads it again (~0.1 s, on the agent's thread).

Memory freed is not memory given back: glibc's allocator keeps freed heap pages for later
(importing a 16 MiB EPUB and opening it left the window at 255 MB; ``malloc_trim`` gave back
over 100 MB of it). So after each idle collection, and a moment after big transient work
(``give_back_soon``: an import, a book opened), the freed pages go back to the system, on a
worker thread (the call takes 20–50 ms after a big import; ctypes releases the GIL). The
source text ``linecache`` keeps is dropped then too: PySide6 reads the source of every module
imported after it (``inspect.getsource``, to see whether it uses PySide), and ``linecache``
kept all of it (about 4 MB once a book is open); a traceback reads it again when needed.
"""

from __future__ import annotations

import gc
import linecache
import sys
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

IDLE_SECONDS = 4.0  # no key press, click or wheel for this long
FIRST_SECONDS = 10.0  # the first idle collection: soon, the SDK may have just loaded
EVERY_SECONDS = 60.0  # later ones at most once a minute
ENCODER_IDLE_SECONDS = 180.0  # deep search's encoder unused this long: let it go
SETTLE_MS = 1500  # give_back_soon: after the last call, once the follow-up reads are done
SETTLE_WAITS = 20  # …waiting for them this many times SETTLE_MS at most
_INPUT = {
    QEvent.Type.KeyPress,
    QEvent.Type.MouseButtonPress,
    QEvent.Type.Wheel,
    QEvent.Type.TouchBegin,
}


class CollectorPolicy(QObject):
    """Installed once per application by ``install``."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.last_input = time.monotonic()
        self.last_collect = time.monotonic() - EVERY_SECONDS + FIRST_SECONDS
        self.collections = 0
        self.busy: list[Callable[[], bool]] = []  # e.g. "an answer is streaming"
        app.installEventFilter(self)
        self.timer = QTimer(self, interval=2000)
        self.timer.timeout.connect(self.maybe_collect)
        self.timer.start()
        gc.freeze()  # start-up's objects: in use for the app's whole life

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _INPUT:
            self.last_input = time.monotonic()
        return False

    def maybe_collect(self) -> bool:
        now = time.monotonic()
        if now - self.last_input < IDLE_SECONDS or now - self.last_collect < EVERY_SECONDS:
            return False
        if any(busy() for busy in self.busy):
            return False
        forget_idle_encoder()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.last_collect = now
        self.collections += 1
        give_back()
        return True


def forget_idle_encoder() -> bool:
    """Let deep search's encoder go when unused for ``ENCODER_IDLE_SECONDS`` (never imported
    here: a window that never searched deeply has not loaded numpy for it)."""
    encoder = sys.modules.get("core.search.encoder")
    return encoder is not None and encoder.forget_if_idle(ENCODER_IDLE_SECONDS)


def give_back() -> None:
    """Drop cached source text and hand freed heap pages back to the system (a worker
    thread trims, so the window never waits for it)."""
    linecache.clearcache()
    from core.books.memory import give_back_memory
    from desktop.tasks import pool

    try:
        pool().submit(give_back_memory)
    except RuntimeError:  # the pool has shut down: Margin is closing
        pass


_settle: QTimer | None = None
_waited = 0


def give_back_soon() -> None:
    """Big transient work has just ended (an import, a book opened): ``give_back`` once
    ``SETTLE_MS`` have passed since the last call and the reads that follow (a book's
    chapters, its conversations: up to a second each for a 16 MiB EPUB) are done, or
    ``SETTLE_WAITS`` times ``SETTLE_MS`` at most."""
    global _settle, _waited
    app = QApplication.instance()
    if app is None:
        return
    if _settle is None or not shiboken6.isValid(_settle):
        _settle = QTimer(app)
        _settle.setSingleShot(True)
        _settle.setInterval(SETTLE_MS)
        _settle.timeout.connect(_settled)
    _waited = 0
    _settle.start()


def _settled() -> None:
    global _waited
    from desktop.tasks import reading

    if reading() and _waited < SETTLE_WAITS and _settle is not None:
        _waited += 1
        _settle.start()
        return
    give_back()


def install(busy: Callable[[], bool] | None = None) -> CollectorPolicy | None:
    """The policy for the running application (made once; None without a QApplication);
    ``busy`` says when the window is showing something move (an answer streaming in), when
    no idle collection may start."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return None
    policy = app.findChild(CollectorPolicy)
    if policy is None:
        policy = CollectorPolicy(app)
    if busy is not None:
        policy.busy.append(busy)
    return policy
