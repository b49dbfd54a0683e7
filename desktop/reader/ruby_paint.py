"""Ruby readings drawn over their base (issue 45, item 2). Qt's rich text has no ruby: the
page keeps each reading as its base's tooltip (``core.books.htmlextras.ruby_element``), and
the text views paint the readings in small type just above the base after the page itself,
so the text (what is selected, highlighted, searched) holds only the base. A paragraph with
ruby gets taller lines (``RUBY_LINE_HEIGHT``) to make room for them.

With ``[reader] ruby = "parentheses"`` the reading follows its base in parentheses, in the
base's size, as books without ruby print it: the base's last character gets letter spacing as
wide as "（reading）" and the reading is painted in that gap, so the text and its offsets
still hold only the base (``parenthesise``)."""

from __future__ import annotations

import html
import re
from typing import cast

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QTextDocument, QTextLine

RUBY_SCALE = 0.5  # readings in half the base's size, as printed books set them
RUBY_LINE_HEIGHT = "line-height: 190%"
_RUBY_PARAGRAPH = re.compile(r'<p>(?=(?:(?!</p>).)*class="ruby" title=)', re.DOTALL)
_RUBY_SPAN = re.compile(r'<span class="ruby" title="([^"]*)">([^<]*)</span>')
OPEN, CLOSE = "\uff08", "\uff09"  # full-width parentheses, as Japanese books print them


def _x(line: QTextLine, position: int) -> float:
    found = cast(tuple[float, int], line.cursorToX(position))  # PySide6 gives (x, position)
    return float(found[0])


def make_room(body: str) -> str:
    """``body`` with taller lines in the paragraphs that hold ruby readings."""
    return _RUBY_PARAGRAPH.sub(f'<p style="{RUBY_LINE_HEIGHT}">', body)


def parenthesise(body: str, font: QFont) -> str:
    """``body`` with room after each ruby base for its reading in parentheses (the width of
    "（reading）" in ``font``, as letter spacing on the base's last character, which carries
    the parenthesised reading for ``paint_readings``); the text keeps only the base."""
    metrics = QFontMetricsF(font)

    def room(match: re.Match[str]) -> str:
        reading = OPEN + html.unescape(match.group(1)) + CLOSE
        base = html.unescape(match.group(2))
        if not base:
            return match.group(0)
        gap = metrics.horizontalAdvance(reading) + 1
        head, last = base[:-1], base[-1]
        return (
            html.escape(head) + f'<span class="ruby" title="{html.escape(reading)}" '
            f'style="letter-spacing: {gap:.1f}px">{html.escape(last)}</span>'
        )

    return _RUBY_SPAN.sub(room, body)


def _paint_inline(
    painter: QPainter,
    origin: QPointF,
    line: QTextLine,
    x: float,
    gap: float,
    base: QFont,
    text: str,
) -> None:
    """``text`` on ``line``'s baseline in the ``gap`` pixels that end at ``x``, in the base's
    font (smaller when the book's styles made the base smaller than the room)."""
    font = QFont(base)
    font.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, 0)
    metrics = QFontMetricsF(font)
    width = metrics.horizontalAdvance(text)
    if width > gap > 0 and font.pointSizeF() > 0:
        font.setPointSizeF(max(4.0, font.pointSizeF() * gap / width))
        metrics = QFontMetricsF(font)
    painter.save()
    painter.setFont(font)
    painter.drawText(QPointF(origin.x() + x - gap, origin.y() + line.y() + line.ascent()), text)
    painter.restore()


def paint_readings(painter: QPainter, document: QTextDocument, clip: QRectF, color: str) -> int:
    """Draw the readings of the ruby in ``clip`` (document coordinates; the painter is
    already translated to them) over their base, centred, or after it in parentheses where the
    base has the room (``parenthesise``); returns how many were drawn."""
    layout = document.documentLayout()
    drawn = 0
    block = document.begin()
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        if rect.bottom() < clip.top():
            block = block.next()
            continue
        if rect.top() > clip.bottom():
            break
        text_layout = block.layout()
        origin = text_layout.position()
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            fragments += 1
            if not fragment.isValid():
                continue
            char_format = fragment.charFormat()
            reading = char_format.toolTip()
            if not reading:
                continue
            start = fragment.position() - block.position()
            line = text_layout.lineForTextPosition(start)
            if not line.isValid():
                continue
            end = start + fragment.length()
            gap = char_format.fontLetterSpacing()
            if gap > 0 and reading.startswith(OPEN):  # room made after the base: inline
                painter.save()
                painter.setPen(QColor(color))
                base = char_format.font().resolve(document.defaultFont())
                _paint_inline(painter, origin, line, _x(line, end), gap, base, reading)
                painter.restore()
                drawn += 1
                continue
            x1 = _x(line, start)
            x2 = (
                _x(line, end)
                if text_layout.lineForTextPosition(max(start, end - 1)).lineNumber()
                == line.lineNumber()
                else line.naturalTextWidth()
            )
            base = QFont(fragment.charFormat().font())
            font = QFont(base)
            size = base.pointSizeF() if base.pointSizeF() > 0 else 12.0
            font.setPointSizeF(max(5.0, size * RUBY_SCALE))
            metrics = QFontMetricsF(font)
            width = metrics.horizontalAdvance(reading)
            left = origin.x() + (min(x1, x2) + max(x1, x2)) / 2 - width / 2
            top = origin.y() + line.y()  # the room above the base: the line before's leading
            painter.save()
            painter.setFont(font)
            painter.setPen(QColor(color))
            painter.drawText(
                QRectF(QPointF(left, top - metrics.height()), QPointF(left + width, top)),
                int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom),
                reading,
            )
            painter.restore()
            drawn += 1
        block = block.next()
    return drawn
