"""Book cover pictures, made in any thread (QImage and QPainter on a QImage are safe there):
the EPUB's own image, the first page of a PDF, or a cover drawn from the title and author,
fitted to the cover size and cached as PNG in ``<data>/covers/<sha256>.<version>.png``; and the
thumbnail the library grid paints. ``desktop/library/covers.py`` keeps them in memory for the view."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QImageReader,
    QPainter,
)

from core.books.cover_names import MAX_COVER_PIXELS, cover_colour, cover_file

log = logging.getLogger("margin.covers")

COVER_SIZE = QSize(180, 270)  # cached on disk and kept in memory (2:3, like most covers)
MAX_PIXELS = MAX_COVER_PIXELS  # a cover image that decodes larger than this is refused
RENDER_PIXELS = 4 * COVER_SIZE.width() * COVER_SIZE.height()  # most any cover is drawn at


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
    from PySide6.QtGui import QLinearGradient  # its enums (presets) are built on first use

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
    from core.books.covers import image_kind  # (the EPUB side: not before the first paint)

    kind = image_kind(data)
    if kind is None:
        return None
    from PySide6.QtCore import QBuffer  # its enums are built on first use, not at start

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


def svg_image(data: bytes, size: QSize = COVER_SIZE) -> QImage | None:
    """An SVG cover drawn on white, only once ``safe_svg`` has kept it to itself (Standard
    Ebooks' covers are SVG: their title lettering is paths over the picture)."""
    from PySide6.QtSvg import QSvgRenderer

    from core.books.covers import safe_svg

    safe = safe_svg(data)
    if safe is None:
        return None
    renderer = QSvgRenderer(QByteArray(safe))
    box = renderer.viewBoxF()
    if not renderer.isValid() or box.width() <= 0 or box.height() <= 0:
        return None
    out = QImage(render_size(box.width(), box.height(), size), QImage.Format.Format_RGB32)
    out.fill(QColor("white"))
    painter = QPainter(out)
    renderer.render(painter)
    painter.end()
    return out


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
    from core.books.covers import epub_cover_bytes, image_kind

    image: QImage | None = None
    try:
        if job.format == "epub":
            data = epub_cover_bytes(Path(job.file_path))
            if data and image_kind(data) is None:
                image = svg_image(data, size)  # an SVG cover, kept to itself by safe_svg
            else:
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


# made on the window's thread first ---------------------------------------------------------

# PySide6 makes a class's Python type, with its enums, the first time Python uses it, and
# two threads doing that at once crash the process: shiboken's table of types is not
# guarded. A worker making QGradient's enums for a new cover while the window painted its
# shelf crashed 3 starts in 150 under load. So the window's thread runs each kind of cover
# work once, small, before a worker does it; a worker then only uses types already made.
_SMALL = QSize(18, 27)
_TINY_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 3"><rect width="2" height="3"/></svg>'
)
_ready: set[str] = set()


def _drawing() -> None:
    from PySide6.QtCore import QBuffer

    image = generated_cover("M", "M", _SMALL)
    thumbnail(fit_cover(image, _SMALL), _SMALL, 2.0)
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    # (PySide takes the format as str, though its stubs say bytes)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    decode_image(bytes(buffer.data().data()), _SMALL)


def _pdf() -> None:
    from PySide6.QtPdf import QPdfDocument

    pdf_first_page(Path(__file__).with_name("no such book.pdf"), _SMALL)  # types made, no file
    doc = QPdfDocument()
    doc.pagePointSize(0)
    doc.render(0, _SMALL)
    doc.close()


_KINDS = {"draw": _drawing, "svg": lambda: svg_image(_TINY_SVG, _SMALL), "pdf": _pdf}


def kinds_for(book_format: str) -> frozenset[str]:
    """The kinds of cover work a book of ``book_format`` may need."""
    extra = {"epub": "svg", "pdf": "pdf"}.get(book_format)
    return frozenset({"draw", extra} if extra else {"draw"})


def ready_for_threads(book_format: str) -> bool:
    """Whether cover work for this format can start on a worker now (no type to make)."""
    return kinds_for(book_format) <= _ready


def make_ready_for_threads(book_format: str) -> None:
    """Run, on the window's thread, each kind of cover work this format needs that has not
    run yet (a few milliseconds, once per process)."""
    for kind in sorted(kinds_for(book_format) - _ready):
        try:
            _KINDS[kind]()
        except Exception:  # a worker makes the types then: no worse than before
            log.warning("preparing %s covers on the window's thread failed", kind, exc_info=True)
        _ready.add(kind)
