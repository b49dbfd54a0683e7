"""Pictures a screen reader does not read as an object: Qt's text interface hands out each
image of a QTextDocument as U+FFFC, which Orca speaks as is ("[OBJ]", or "object
replacement character" letter by letter), and PySide cannot override that interface.

So a picture alone on its line (a book's figures, logos, title pages) is not left in the
document as an image: after a page is inserted, its U+FFFC becomes one invisible character
(``MARK``, a zero-width space: no character is added or removed, so every offset, highlight,
search mark and reading place stays) on a line of the picture's own height, and the view
paints the picture there (``paint_pictures``, called where the view paints the readings of
ruby). The alt text follows as the words "[Illustration: …]" the stored page text has,
invisible and 1 px high (``with_alt_text``); a decorative picture (``alt=""``) has none, and
its line says nothing. A picture inside a line of text stays an image (it is rare, and the
line's height depends on it).
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import QPointF, QRectF, Qt, QUrl
from PySide6.QtGui import (
    QImage,
    QPainter,
    QPixmap,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextLine,
)

MARK = "\u200b"  # what the picture's character becomes: read as nothing, drawn as nothing
PICTURE = QTextFormat.Property.UserProperty + 41  # the picture's name, on MARK's format
SIZE = QTextFormat.Property.UserProperty + 42  # width, height, top, x from the mark's x
# on the picture's block: (top, height) of the line the picture made, from the layout's top:
# Qt reports a line of fixed height as the height of its glyphs, placed low in it
LINE = QTextFormat.Property.UserProperty + 43

_IMG_ALT = re.compile(r"""<img\b[^>]*?\balt\s*=\s*(["'])(.*?)\1[^>]*>""", re.IGNORECASE | re.DOTALL)
# the alt text after its image, as the stored page text has it: in the text a screen reader
# reads, invisible and 1 px high on the page
ALT_STYLE = "font-size: 1px; color: transparent; margin: 0"


def with_alt_text(body: str) -> str:
    """``body`` with "[Illustration: alt]" after each image that has alt text."""

    def add(match: re.Match[str]) -> str:
        alt = " ".join(match.group(2).split())
        if not alt:
            return match.group(0)
        return f'{match.group(0)}<div style="{ALT_STYLE}">[Illustration: {alt}]</div>'

    return _IMG_ALT.sub(add, body)


def unobject(document: QTextDocument, start: int, end: int) -> int:
    """Turn each picture alone on its line between ``start`` and ``end`` into ``MARK`` on a
    line as high as the picture's was; returns how many."""
    layout = document.documentLayout()
    done = 0
    block = document.findBlock(start)
    while block.isValid() and block.position() <= end:
        text = block.text()
        at = text.find("\ufffc")
        if at >= 0 and not text.replace("\ufffc", "", 1).strip():
            image = block_image(block, at)
            if image is not None:
                name, fmt = image
                layout.blockBoundingRect(block)  # lays the block out
                line = block.layout().lineForTextPosition(at)
                x1, x2 = _x(line, at), _x(line, at + 1)
                width, height = abs(x2 - x1), _height(document, fmt, name, abs(x2 - x1))
                top = line.y() + line.ascent() - height  # from the layout's top
                line_top, line_height = line.y(), line.height()
                raw = math.ceil(line.ascent() + line.descent() + max(0.0, line.leading()))
                spacing = block.blockFormat().lineHeight(raw, 1.0)  # as Qt spaced the line
                cursor = QTextCursor(block)
                cursor.setPosition(block.position() + at)
                cursor.setPosition(block.position() + at + 1, QTextCursor.MoveMode.KeepAnchor)
                mark = QTextCharFormat()
                mark.setForeground(Qt.GlobalColor.transparent)
                mark.setProperty(PICTURE, name)
                cursor.insertText(MARK, mark)
                layout.blockBoundingRect(block)  # the mark's line, laid out
                small = block.layout().lineAt(0)
                # where the picture was from where the mark is: the block's alignment moves
                # both alike when the column's width changes
                mark.setProperty(SIZE, [width, height, top, min(x1, x2) - _x(small, at)])
                cursor.setPosition(block.position() + at)
                cursor.setPosition(block.position() + at + 1, QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(mark)
                small_raw = math.ceil(small.ascent() + small.descent() + max(0.0, small.leading()))
                height_format = QTextBlockFormat()
                height_format.setProperty(LINE, [line_top, line_height])
                height_format.setLineHeight(  # the mark's line on top, the rest under it
                    spacing - small_raw,
                    QTextBlockFormat.LineHeightTypes.LineDistanceHeight.value,
                )
                cursor.mergeBlockFormat(height_format)
                done += 1
        block = block.next()
    return done


def pictures(document: QTextDocument) -> list[tuple[str, float]]:
    """(name, width drawn) of every picture of ``document``, images and marks alike."""
    found = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                found.append((fmt.toImageFormat().name(), fmt.toImageFormat().width()))
            elif fmt.property(PICTURE):
                found.append((str(fmt.property(PICTURE)), float(fmt.property(SIZE)[0])))
            it += 1
        block = block.next()
    return found


def picture_line(block: QTextBlock) -> tuple[float, float] | None:
    """(top, height) of the line of the picture ``block`` holds, or None (not a picture)."""
    found = block.blockFormat().property(LINE)
    return (float(found[0]), float(found[1])) if found else None


def picture_name(fmt: QTextFormat) -> str:
    """The picture a character shows (an image, or a picture's mark), or ""."""
    if fmt.isImageFormat():
        return str(fmt.toImageFormat().name())
    return str(fmt.property(PICTURE) or "")


def block_image(block: QTextBlock, at: int) -> tuple[str, QTextFormat] | None:
    """The name and format of the image at ``at`` in ``block`` (None: not an image)."""
    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + at + 1)
    fmt = cursor.charFormat()
    if not fmt.isImageFormat() or not fmt.toImageFormat().name():
        return None
    return fmt.toImageFormat().name(), fmt


def _height(document: QTextDocument, fmt: QTextFormat, name: str, width: float) -> float:
    """The height Qt draws the picture at (its width is what the layout gave it)."""
    image = fmt.toImageFormat()
    if image.height() > 0:
        return float(image.height())
    natural = _image(document, name)
    if natural is None or natural.width() <= 0:
        return 0.0
    return width * natural.height() / natural.width()


def _image(document: QTextDocument, name: str) -> QImage | None:
    found = document.resource(QTextDocument.ResourceType.ImageResource, QUrl(name))
    if isinstance(found, QImage) and not found.isNull():
        return found
    if isinstance(found, QPixmap) and not found.isNull():
        return found.toImage()
    return None


def picture_rect(document: QTextDocument, block: QTextBlock) -> tuple[str, QRectF] | None:
    """The picture a block's mark stands for and where it is drawn (document coordinates)."""
    at = block.text().find(MARK)
    if at < 0:
        return None
    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + at + 1)
    fmt = cursor.charFormat()
    name = fmt.property(PICTURE)
    if not name:
        return None
    width, height, top, dx = fmt.property(SIZE)
    line = block.layout().lineForTextPosition(at)
    origin = block.layout().position()
    # (a picture wider than its line starts at the line's start, as Qt puts it)
    x = max(origin.x() + _x(line, at) + dx, origin.x() + line.x())
    return str(name), QRectF(x, origin.y() + top, width, height)


def picture_at(document: QTextDocument, point: QPointF) -> str:
    """The picture drawn at ``point`` (document coordinates), or ""."""
    layout = document.documentLayout()
    block = document.findBlock(layout.hitTest(point, Qt.HitTestAccuracy.FuzzyHit))
    for candidate in (block, block.previous(), block.next()):
        found = picture_rect(document, candidate) if candidate.isValid() else None
        if found is not None and found[1].contains(point):
            return found[0]
    return ""


def paint_pictures(painter: QPainter, document: QTextDocument, clip: QRectF) -> int:
    """Draw the pictures ``unobject`` took out of the text in ``clip`` (document
    coordinates; the painter is translated to them); returns how many were drawn."""
    layout = document.documentLayout()
    drawn = 0
    block = document.findBlock(layout.hitTest(clip.topLeft(), Qt.HitTestAccuracy.FuzzyHit))
    block = block.previous() if block.previous().isValid() else block  # a picture above
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        if rect.top() > clip.bottom():
            break
        found = picture_rect(document, block)
        image = _image(document, found[0]) if found is not None else None
        if found is not None and image is not None and found[1].intersects(clip):
            painter.drawImage(found[1], image)
            drawn += 1
        block = block.next()
    return drawn


def _x(line: QTextLine, at: int) -> float:
    found = line.cursorToX(at)  # (x, position) in PySide
    return float(found[0] if isinstance(found, tuple) else found)  # type: ignore[arg-type]


def selection_text(document: QTextDocument, start: int, text: str) -> str:
    """``text`` (selected from ``start``) without the pictures' marks: copying a passage
    with a picture gives its alt text, not an invisible character."""
    if MARK not in text:
        return text
    kept = []
    for i, char in enumerate(text):
        if char == MARK:
            cursor = QTextCursor(document)
            cursor.setPosition(start + i + 1)
            if cursor.charFormat().property(PICTURE):
                continue
        kept.append(char)
    return "".join(kept)
