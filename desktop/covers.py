"""Book covers for the library view: the EPUB's own image, the first page of a PDF, or a
cover drawn from the title and author; cached as PNG in ``<data>/covers/<sha256>.png``.

Everything that decodes, renders or draws runs in worker threads (QImage and QPainter on a
QImage are safe there); the UI thread only turns finished images into pixmaps. ``CoverStore``
keeps recently shown covers in memory, serves the newest requests first (the ones on screen
while the reader scrolls) and fills in covers for the rest of the library in the background.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QImageReader,
    QLinearGradient,
    QPainter,
    QPixmap,
)

from core.books.covers import cover_colour, cover_file, epub_cover_bytes

log = logging.getLogger("margin.covers")

COVER_SIZE = QSize(180, 270)  # cached on disk and kept in memory (2:3, like most covers)
MAX_PIXELS = 40_000_000  # a cover image that decodes larger than this is refused
MEMORY_COVERS = 250  # about 50 MB of pixmaps at most


@dataclass(frozen=True)
class CoverJob:
    sha256: str
    format: str
    file_path: str
    title: str
    author: str


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


def decode_image(data: bytes, size: QSize = COVER_SIZE) -> QImage | None:
    """Decode image bytes, refusing pictures that would take too much memory; JPEGs are
    decoded straight at a small size."""
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QBuffer.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    full = reader.size()
    if not full.isValid() or full.width() * full.height() > MAX_PIXELS:
        return None
    scale = max(size.width() / full.width(), size.height() / full.height())
    if scale < 0.5:
        reader.setScaledSize(
            QSize(round(full.width() * scale) + 1, round(full.height() * scale) + 1)
        )
    image = reader.read()
    return None if image.isNull() else image


def pdf_first_page(path: Path, size: QSize = COVER_SIZE) -> QImage | None:
    """The first page of a PDF, rendered small on white (QtPdf guards its engine itself)."""
    from PySide6.QtPdf import QPdfDocument

    doc = QPdfDocument()
    try:
        if doc.load(str(path)) != QPdfDocument.Error.None_ or doc.pageCount() < 1:
            return None
        points = doc.pagePointSize(0)
        if points.width() <= 0 or points.height() <= 0:
            return None
        scale = max(size.width() / points.width(), size.height() / points.height())
        render = QSize(round(points.width() * scale), round(points.height() * scale))
        page = doc.render(0, render)
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


# the store (UI thread) -------------------------------------------------------------------

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="margin-covers")
    return _executor


class _Bridge(QObject):
    """Lives on the UI thread for the whole run; workers emit on it and Qt queues the call."""

    done = Signal(object)


_bridge: _Bridge | None = None


def _deliver(payload: object) -> None:
    assert isinstance(payload, tuple)
    ref: weakref.ref[CoverStore] = payload[0]
    sha: str = payload[1]
    image: QImage | None = payload[2]
    store = ref()
    if store is not None:
        store._arrived(sha, image)


def _get_bridge() -> _Bridge:
    global _bridge
    if _bridge is None:
        _bridge = _Bridge()
        _bridge.done.connect(_deliver, Qt.ConnectionType.QueuedConnection)
    return _bridge


class CoverStore(QObject):
    """Covers by book SHA-256: ``pixmap(job)`` answers from memory at once, or returns None and
    loads the cover in a worker; ``coverReady(sha256)`` says when it has arrived."""

    coverReady = Signal(str)

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data_dir = data_dir
        self._bridge = _get_bridge()
        self._pixmaps: OrderedDict[str, QPixmap] = OrderedDict()
        self._lock = threading.Lock()
        self._urgent: dict[str, CoverJob] = {}
        self._background: dict[str, CoverJob] = {}
        self._busy: set[str] = set()
        self._closed = False
        self.made = 0  # covers delivered (tests and the benchmark read it)

    def pixmap(self, job: CoverJob) -> QPixmap | None:
        pixmap = self._pixmaps.get(job.sha256)
        if pixmap is not None:
            self._pixmaps.move_to_end(job.sha256)
            return pixmap
        self.request(job, urgent=True)
        return None

    def has(self, sha256: str) -> bool:
        return sha256 in self._pixmaps

    def request(self, job: CoverJob, *, urgent: bool = False) -> None:
        with self._lock:
            sha = job.sha256
            if self._closed or sha in self._busy:
                return
            queued = sha in self._urgent or sha in self._background
            if urgent:
                self._background.pop(sha, None)
                self._urgent.pop(sha, None)
                self._urgent[sha] = job  # the newest request is served first
            elif not queued:
                self._background[sha] = job
        if not queued:
            _pool().submit(self._work, weakref.ref(self), self._bridge, self.data_dir)

    def prefetch(self, jobs: list[CoverJob]) -> None:
        """Make covers for books that have none yet (new imports), after the visible ones."""
        for job in jobs:
            if job.sha256 not in self._pixmaps:
                self.request(job)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._urgent.clear()
            self._background.clear()

    def _take(self) -> CoverJob | None:
        with self._lock:
            if self._urgent:
                sha = next(reversed(self._urgent))
                job = self._urgent.pop(sha)
            elif self._background:
                sha = next(iter(self._background))
                job = self._background.pop(sha)
            else:
                return None
            self._busy.add(sha)
            return job

    @staticmethod
    def _work(ref: weakref.ref[CoverStore], bridge: _Bridge, data_dir: Path) -> None:
        store = ref()
        job = store._take() if store is not None else None
        del store  # never keep the store alive from a worker
        if job is None:
            return
        try:
            image: QImage | None = cached_cover(data_dir, job)
        except Exception:
            log.exception("cover for %s failed", job.file_path)
            image = None
        try:
            bridge.done.emit((ref, job.sha256, image))
        except RuntimeError:
            pass  # the application is shutting down

    def _arrived(self, sha: str, image: QImage | None) -> None:
        with self._lock:
            self._busy.discard(sha)
        if image is None or image.isNull():
            image = generated_cover("?", "")
        self._pixmaps[sha] = QPixmap.fromImage(image)
        while len(self._pixmaps) > MEMORY_COVERS:
            self._pixmaps.popitem(last=False)
        self.made += 1
        self.coverReady.emit(sha)
