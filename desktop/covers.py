"""Book covers for the library view: the EPUB's own image, the first page of a PDF, or a
cover drawn from the title and author; cached as PNG in ``<data>/covers/<sha256>.png``.

Covers are made in worker threads (QImage and QPainter on a QImage are safe there).
``CoverStore`` keeps the covers shown in memory at the size shown, serves the newest
requests first (those on screen) and makes covers for new books in the background.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QBuffer, QByteArray, QObject, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QImageReader,
    QLinearGradient,
    QPainter,
    QPixmap,
)

from core.books.covers import (
    MAX_COVER_PIXELS,
    cover_colour,
    cover_file,
    epub_cover_bytes,
    image_kind,
)
from desktop.tasks import Lane

log = logging.getLogger("margin.covers")

COVER_SIZE = QSize(180, 270)  # cached on disk and kept in memory (2:3, like most covers)
MAX_PIXELS = MAX_COVER_PIXELS  # a cover image that decodes larger than this is refused
RENDER_PIXELS = 4 * COVER_SIZE.width() * COVER_SIZE.height()  # most any cover is drawn at
MEMORY_BYTES = 96 * 1024 * 1024  # pixmaps kept at the size shown, as many as fit in this


@dataclass(frozen=True)
class CoverJob:
    sha256: str
    format: str
    file_path: str
    title: str
    author: str


@dataclass(frozen=True)
class _Task:
    job: CoverJob
    size: QSize  # device pixels to show it at
    ratio: float  # device pixel ratio
    urgent: bool


# drawing (any thread) ----------------------------------------------------------------------


def generated_cover(title: str, author: str, size: QSize = COVER_SIZE) -> QImage:
    """A cover drawn from the title and author on a colour derived from the title."""
    w, h = size.width(), size.height()
    image = QImage(size, QImage.Format.Format_RGB32)
    base = QColor(*cover_colour(title))
    gradient = QLinearGradient(0, 0, 0, h)
    gradient.setColorAt(0.0, base.lighter(115))
    gradient.setColorAt(1.0, base.darker(125))
    p = QPainter(image)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        p.fillRect(image.rect(), gradient)
        p.fillRect(QRectF(0, 0, w * 0.045, h), base.darker(140))  # a spine
        margin = w * 0.11
        frame = QRectF(margin, h * 0.1, w - 2 * margin, h * 0.58)
        title_font = QFont("serif")
        title_font.setStyleHint(QFont.StyleHint.Serif)
        title_font.setBold(True)
        flags = int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter) | int(
            Qt.TextFlag.TextWordWrap
        )
        text = title.strip() or "Untitled"
        px = max(10.0, h / 12)
        while px > 9:
            title_font.setPixelSize(int(px))
            bound = QFontMetricsF(title_font).boundingRect(frame, flags, text)
            if bound.height() <= frame.height() and bound.width() <= frame.width():
                break
            px *= 0.9
        p.setFont(title_font)
        p.setPen(QColor(255, 255, 255, 240))
        p.drawText(frame, flags, text)
        p.setPen(QColor(255, 255, 255, 120))
        line_y = h * 0.74
        p.drawLine(int(w * 0.35), int(line_y), int(w * 0.65), int(line_y))
        if author.strip():
            author_font = QFont("sans-serif")
            author_font.setPixelSize(max(9, int(h / 22)))
            p.setFont(author_font)
            p.setPen(QColor(255, 255, 255, 215))
            p.drawText(
                QRectF(margin, line_y + h * 0.03, w - 2 * margin, h * 0.2),
                int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
                | int(Qt.TextFlag.TextWordWrap),
                author.strip(),
            )
    finally:
        p.end()
    return image


def fit_cover(image: QImage, size: QSize = COVER_SIZE) -> QImage:
    """Scale an image to the cover size: fill it (cropping a little) when the shapes are close,
    otherwise fit it whole on a background of its own average colour."""
    if image.isNull():
        return image
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    target = size.width() / size.height()
    ratio = image.width() / max(1, image.height())
    smooth = Qt.TransformationMode.SmoothTransformation
    if abs(ratio - target) / target <= 0.2:
        scaled = image.scaled(size, Qt.AspectRatioMode.KeepAspectRatioByExpanding, smooth)
        x = (scaled.width() - size.width()) // 2
        y = (scaled.height() - size.height()) // 2
        return scaled.copy(x, y, size.width(), size.height())
    scaled = image.scaled(size, Qt.AspectRatioMode.KeepAspectRatio, smooth)
    average = image.scaled(1, 1, Qt.AspectRatioMode.IgnoreAspectRatio, smooth).pixelColor(0, 0)
    out = QImage(size, QImage.Format.Format_RGB32)
    out.fill(average)
    p = QPainter(out)
    p.drawImage(
        (size.width() - scaled.width()) // 2, (size.height() - scaled.height()) // 2, scaled
    )
    p.end()
    return out


def render_size(width: float, height: float, size: QSize = COVER_SIZE) -> QSize:
    """The size to draw a ``width`` x ``height`` picture at for a cover of ``size``: large
    enough to cover it, but never more than ``RENDER_PIXELS`` (a 1 x 14400 pt page would
    otherwise be drawn 180 x 2,592,000 px, 1.9 GB), nor longer than four covers."""
    scale = max(size.width() / width, size.height() / height)
    longest = 4 * max(size.width(), size.height())
    scale = min(scale, (RENDER_PIXELS / (width * height)) ** 0.5, longest / max(width, height))
    return QSize(max(1, int(width * scale)), max(1, int(height * scale)))


def decode_image(data: bytes, size: QSize = COVER_SIZE) -> QImage | None:
    """Decode a raster image (its format sniffed from its bytes: never SVG, which can pull
    in local files), refusing pictures that would take too much memory and decoding at no
    more than ``RENDER_PIXELS``."""
    kind = image_kind(data)
    if kind is None:
        return None
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QBuffer.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer, kind.encode())
    reader.setDecideFormatFromContent(False)
    full = reader.size()
    if not full.isValid() or full.width() * full.height() > MAX_PIXELS:
        return None
    scaled = render_size(full.width(), full.height(), size)
    if scaled.width() * scaled.height() < full.width() * full.height() * 0.25:
        reader.setScaledSize(scaled)
    image = reader.read()
    return None if image.isNull() else image


def pdf_first_page(path: Path, size: QSize = COVER_SIZE) -> QImage | None:
    """The first page of a PDF, rendered small on white (QtPdf guards its engine itself),
    never larger than ``RENDER_PIXELS`` whatever the page's shape."""
    from PySide6.QtPdf import QPdfDocument

    doc = QPdfDocument()
    try:
        if doc.load(str(path)) != QPdfDocument.Error.None_ or doc.pageCount() < 1:
            return None
        points = doc.pagePointSize(0)
        if points.width() <= 0 or points.height() <= 0:
            return None
        page = doc.render(0, render_size(points.width(), points.height(), size))
        if page.isNull():
            return None
        out = QImage(page.size(), QImage.Format.Format_RGB32)
        out.fill(QColor("white"))  # pages are transparent where nothing is printed
        p = QPainter(out)
        p.drawImage(0, 0, page)
        p.end()
        return out
    finally:
        doc.close()


def make_cover(job: CoverJob, size: QSize = COVER_SIZE) -> QImage:
    """The book's own cover when it has one, else a generated one. Never raises for a bad
    book: whatever goes wrong, the reader still sees a cover with the title."""
    image: QImage | None = None
    try:
        if job.format == "epub":
            data = epub_cover_bytes(Path(job.file_path))
            image = decode_image(data, size) if data else None
        elif job.format == "pdf":
            image = pdf_first_page(Path(job.file_path), size)
        elif job.format == "cbz":  # a comic: its first picture
            from core.books.comics import cbz_cover_bytes

            data = cbz_cover_bytes(Path(job.file_path))
            image = decode_image(data, size) if data else None
    except Exception:
        log.warning("no cover from %s; drawing one", job.file_path, exc_info=True)
        image = None
    if image is None or image.isNull():
        return generated_cover(job.title, job.author, size)
    return fit_cover(image, size)


def cached_cover(data_dir: Path, job: CoverJob, size: QSize = COVER_SIZE) -> QImage:
    """The cover from the cache, made and saved there first when missing or unreadable."""
    path = cover_file(data_dir, job.sha256)
    if path.exists():
        image = QImage(str(path))
        if not image.isNull():
            return image if image.size() == size else fit_cover(image, size)
        log.warning("cached cover %s is unreadable; making it again", path)
    image = make_cover(job, size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.stem}.{threading.get_ident()}.tmp.png")
        if image.save(str(temp)):
            os.replace(temp, path)
        else:
            temp.unlink(missing_ok=True)
            log.warning("could not save the cover %s", path)
    except OSError:
        log.warning("could not save the cover %s", path, exc_info=True)
    return image


def thumbnail(image: QImage, size: QSize, ratio: float = 1.0, radius: float = 3.0) -> QImage:
    """The cover as shown in the grid: exactly ``size`` device pixels, rounded corners and a
    faint edge baked in, so painting it is a plain copy (no scaling, no clipping)."""
    out = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(Qt.GlobalColor.transparent)
    scaled = image.scaled(
        size, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    p = QPainter(out)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    rect = QRectF(0.5, 0.5, size.width() - 1, size.height() - 1)
    r = radius * ratio
    p.setPen(QColor(0, 0, 0, 60))
    p.setBrush(QBrush(scaled))
    p.drawRoundedRect(rect, r, r)
    p.end()
    out.setDevicePixelRatio(ratio)
    return out


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
            _covers.submit(self._work, weakref.ref(self), self._bridge, self.data_dir)

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
            if not self._queue:
                return None
            urgent = [s for s, t in self._queue.items() if t.urgent]
            sha = urgent[-1] if urgent else next(iter(self._queue))
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
