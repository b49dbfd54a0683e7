"""Book covers for the library view: the EPUB's own image, the first page of a PDF, or a
cover drawn from the title and author; cached as PNG in ``<data>/covers/<sha256>.<version>.png``.

Covers are made in worker threads by ``desktop/library/cover_images.py`` (its names are importable
from here too). ``CoverStore`` keeps the covers shown in memory at the size shown, serves the
newest requests first (those on screen) and makes covers for new books in the background.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QImageReader, QPixmap

from core.books.cover_names import cover_file
from desktop.library.cover_images import (
    COVER_SIZE,
    MAX_PIXELS,
    RENDER_PIXELS,
    CoverJob,
    cached_cover,
    decode_image,
    fit_cover,
    generated_cover,
    make_cover,
    make_ready_for_threads,
    pdf_first_page,
    ready_for_threads,
    render_size,
    thumbnail,
)
from desktop.tasks import Lane

log = logging.getLogger("margin.covers")
__all__ = [
    "COVER_SIZE",
    "MAX_PIXELS",
    "MEMORY_BYTES",
    "RENDER_PIXELS",
    "CoverJob",
    "CoverStore",
    "cached_cover",
    "decode_image",
    "fit_cover",
    "generated_cover",
    "make_cover",
    "pdf_first_page",
    "render_size",
    "thumbnail",
]

MEMORY_BYTES = 96 * 1024 * 1024  # pixmaps kept at the size shown, as many as fit in this


@dataclass(frozen=True)
class _Task:
    job: CoverJob
    size: QSize  # device pixels to show it at
    ratio: float  # device pixel ratio
    urgent: bool


# the store (UI thread) -------------------------------------------------------------------

# covers come in bursts (a whole library): two at a time on the window's one pool
_covers = Lane(2)


class _Bridge(QObject):
    """Lives on the UI thread for the whole run; workers emit on it and Qt queues the call."""

    done = Signal(object)


_bridge: _Bridge | None = None


def _deliver(payload: object) -> None:
    assert isinstance(payload, tuple)
    ref: weakref.ref[CoverStore] = payload[0]
    store = ref()
    if store is not None and shiboken6.isValid(store):  # its window may have been closed
        store._arrived(payload[1], payload[2])


def _get_bridge() -> _Bridge:
    global _bridge
    if _bridge is None:
        _bridge = _Bridge()
        _bridge.done.connect(_deliver, Qt.ConnectionType.QueuedConnection)
    return _bridge


class CoverStore(QObject):
    """Covers by book SHA-256, at the size the view shows them. ``pixmap(job)`` answers from
    memory at once, or returns None (or the cover at the previous size) and fetches it;
    ``coverReady(sha256)`` says when it has arrived.

    Covers missing from the cache are made in worker threads. Cached ones are read on the UI
    thread, a few at a time within ``LOAD_BUDGET_MS`` per turn of the event loop: PySide6
    keeps the GIL while Qt decodes or scales an image, so a worker reading them would stall
    the UI thread just the same (measured: 340 ms for one big scale), while a small PNG read
    and scaled on the UI thread costs about a millisecond, between two frames."""

    coverReady = Signal(str)
    LOAD_BUDGET_MS = 2.0

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data_dir = data_dir
        self._bridge = _get_bridge()
        self._pixmaps: OrderedDict[str, QPixmap] = OrderedDict()
        self._stale: dict[str, QPixmap] = {}
        self._size = QSize(COVER_SIZE)
        self._ratio = 1.0
        self._lock = threading.Lock()
        self._loads: OrderedDict[str, CoverJob] = OrderedDict()  # cached: read here, newest first
        self._queue: dict[str, _Task] = {}  # to make in a worker
        self._busy: set[str] = set()
        self._wanted: set[str] = set()
        self._closed = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._drain)
        self.made = 0  # covers delivered (tests and the benchmark read it)

    def set_display_size(self, size: QSize, ratio: float = 1.0) -> None:
        """The size covers are shown at (logical pixels); covers at another size are fetched
        again, and shown scaled until then."""
        device = QSize(max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio)))
        if device == self._size and ratio == self._ratio:
            return
        self._size, self._ratio = device, ratio
        self._stale.update(self._pixmaps)
        self._pixmaps = OrderedDict()

    def pixmap(self, job: CoverJob) -> QPixmap | None:
        pixmap = self._pixmaps.get(job.sha256)
        if pixmap is not None:
            self._pixmaps.move_to_end(job.sha256)
            return pixmap
        self.request(job, urgent=True)
        return self._stale.get(job.sha256)

    def has(self, sha256: str) -> bool:
        return sha256 in self._pixmaps

    def request(self, job: CoverJob, *, urgent: bool = False) -> None:
        """Fetch a cover: ``urgent`` ones (on screen) first; the others are only made and
        cached when missing (a new import), then shown if still wanted."""
        sha = job.sha256
        if self._closed:
            return
        if urgent and sha not in self._busy and cover_file(self.data_dir, sha).exists():
            self._loads.pop(sha, None)
            self._loads[sha] = job
            if not self._timer.isActive():
                self._timer.start()
            return
        task = _Task(job, QSize(self._size), self._ratio, urgent)
        with self._lock:
            if sha in self._busy:
                if urgent:
                    self._wanted.add(sha)  # asked again when the running task is done
                return
            queued = sha in self._queue
            if urgent or not queued:
                self._queue[sha] = task
        if not queued:
            self._submit(job.format)

    def _submit(self, book_format: str) -> None:
        """Hand a queued cover to a worker; the first of its kind waits one turn of the loop
        (after the paint under way), for the window's thread to make the types it uses
        (``make_ready_for_threads``)."""
        if ready_for_threads(book_format):
            _covers.submit(self._work, weakref.ref(self), self._bridge, self.data_dir)
            return

        def then() -> None:
            make_ready_for_threads(book_format)
            if not self._closed:
                _covers.submit(self._work, weakref.ref(self), self._bridge, self.data_dir)

        QTimer.singleShot(0, self, then)

    def prefetch(self, jobs: list[CoverJob]) -> None:
        """Make and cache covers for books that have none yet (new imports): one worker task
        checks the files, so a big library costs the UI thread nothing here."""
        if jobs and not self._closed:
            _covers.submit(self._missing, weakref.ref(self), self.data_dir, list(jobs))

    @staticmethod
    def _missing(ref: weakref.ref[CoverStore], data_dir: Path, jobs: list[CoverJob]) -> None:
        missing = [j for j in jobs if not cover_file(data_dir, j.sha256).exists()]
        store = ref()
        if store is not None and missing:
            bridge = store._bridge
            del store
            bridge.done.emit((ref, None, missing))

    def preload(self, jobs: list[CoverJob]) -> None:
        """Read cached covers ahead of scrolling, in idle turns after the ones on screen, so
        scrolling later is plain copies."""
        if self._closed:
            return
        for job in jobs:
            if job.sha256 not in self._pixmaps and job.sha256 not in self._loads:
                self._loads[job.sha256] = job
                self._loads.move_to_end(job.sha256, last=False)
        if self._loads and not self._timer.isActive():
            self._timer.start()

    def keep_only(self, shas: set[str]) -> None:
        """Let go of every cover in memory but these, and stop reading ahead: the shelf is
        hidden behind a book (500 covers held 29 MB). ``preload`` reads them again, about a
        millisecond each, when it shows."""
        self._loads.clear()
        for sha in [s for s in self._pixmaps if s not in shas]:
            del self._pixmaps[sha]
        self._stale = {s: p for s, p in self._stale.items() if s in shas}

    def close(self) -> None:
        self._closed = True
        if shiboken6.isValid(self._timer):
            self._timer.stop()
        self._loads.clear()
        with self._lock:
            self._queue.clear()

    def _drain(self) -> None:
        """Read cached covers, newest request first, until the time budget is spent."""
        start = time.perf_counter()
        while self._loads and (time.perf_counter() - start) * 1000 < self.LOAD_BUDGET_MS:
            sha, job = self._loads.popitem(last=True)
            if sha in self._pixmaps:
                continue
            path = cover_file(self.data_dir, sha)
            if not path.exists():  # not made yet: a worker makes it
                self.request(job)
                continue
            reader = QImageReader(str(path))
            reader.setScaledSize(self._size)
            image = reader.read()
            if image.isNull():  # unreadable: a worker makes it again
                log.warning("cached cover for %s is unreadable", job.file_path)
                cover_file(self.data_dir, sha).unlink(missing_ok=True)
                self.request(job, urgent=True)
                continue
            self._store(sha, thumbnail(image, self._size, self._ratio))
        if self._loads:
            self._timer.start()

    def _take(self) -> _Task | None:
        with self._lock:
            # (a cover whose types are still to be made waits for its own hand-over)
            ready = [s for s, t in self._queue.items() if ready_for_threads(t.job.format)]
            if not ready:
                return None
            urgent = [s for s in ready if self._queue[s].urgent]
            sha = urgent[-1] if urgent else ready[0]
            task = self._queue.pop(sha)
            self._busy.add(sha)
            return task

    @staticmethod
    def _work(ref: weakref.ref[CoverStore], bridge: _Bridge, data_dir: Path) -> None:
        store = ref()
        task = store._take() if store is not None else None
        del store  # never keep the store alive from a worker
        if task is None:
            return
        job = task.job
        try:
            image = thumbnail(cached_cover(data_dir, job), task.size, task.ratio)
        except Exception:
            log.exception("cover for %s failed", job.file_path)
            image = thumbnail(generated_cover(job.title, job.author), task.size, task.ratio)
        try:
            bridge.done.emit((ref, task, image))
        except RuntimeError:
            pass  # the application is shutting down

    def _arrived(self, task: _Task | None, image: object) -> None:
        if task is None:  # the books whose covers are missing: make them in the background
            assert isinstance(image, list)
            for job in image:
                self.request(job)
            return
        sha = task.job.sha256
        with self._lock:
            self._busy.discard(sha)
            wanted = sha in self._wanted
            self._wanted.discard(sha)
        if not isinstance(image, QImage) or task.size != self._size:
            if wanted:  # made for an older size: fetch it again at this one
                self.request(task.job, urgent=True)
            return
        self._store(sha, image)

    def _store(self, sha: str, image: QImage) -> None:
        self._pixmaps[sha] = QPixmap.fromImage(image)
        self._stale.pop(sha, None)
        limit = max(50, MEMORY_BYTES // max(1, self._size.width() * self._size.height() * 4))
        while len(self._pixmaps) > limit:
            self._pixmaps.popitem(last=False)
        self.made += 1
        self.coverReady.emit(sha)
