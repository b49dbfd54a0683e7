"""How a highlight is drawn in a text view: its colour as a background, or as an underline or
a line through the words (an underline in the highlight's colour, a mid-tone that shows on light and
dark pages; a line through in the text's colour over a faint wash of the highlight's)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF, QTextCharFormat

from desktop.theme import highlight_colour

# a highlight's colour as a line: mid-tones that show on a white page and on a black one
LINE_COLOURS = {
    "yellow": "#c99400",
    "green": "#2e9b3a",
    "blue": "#2f74e0",
    "pink": "#e0408f",
    "purple": "#9a4fd8",
}


def line_colour(name: str) -> QColor:
    return QColor(LINE_COLOURS.get(name, LINE_COLOURS["yellow"]))


def highlight_format(colour: str, style: str = "highlight") -> QTextCharFormat:
    fmt = QTextCharFormat()
    if style == "underline":
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        fmt.setUnderlineColor(line_colour(colour))
        fmt.setFontUnderline(True)
    elif style == "strike":
        # the line is drawn in the text's colour (readable on every theme); a faint wash of
        # the highlight's colour says which colour it is
        fmt.setFontStrikeOut(True)
        wash = QColor(highlight_colour(colour))
        wash.setAlpha(wash.alpha() // 2)
        fmt.setBackground(wash)
    else:
        fmt.setBackground(highlight_colour(colour))
    return fmt


# a PDF page is always drawn on white (pdf_canvas): its line through is the print's near-black
PDF_INK = "#202020"


def paint_highlight(painter: QPainter, area: QPolygonF, colour: str, style: str) -> None:
    """Draw one line's highlight on a PDF page as ``highlight_format`` draws it in a text:
    a background, an underline in the highlight's line colour, or a line through the words
    over a faint wash. ``area`` is the words' box on screen."""
    box = area.boundingRect()
    painter.save()
    if style in ("underline", "strike"):
        width = max(1.5, box.height() * 0.08)
        if style == "strike":
            wash = QColor(highlight_colour(colour))
            wash.setAlpha(wash.alpha() // 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(wash)
            painter.drawPolygon(area)
            y, pen_colour = box.center().y(), QColor(PDF_INK)
        else:
            y, pen_colour = box.bottom() - width / 2, line_colour(colour)
        pen = QPen(pen_colour, width)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        painter.setPen(pen)
        painter.drawLine(QPointF(box.left(), y), QPointF(box.right(), y))
    else:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(highlight_colour(colour))
        painter.drawPolygon(area)
    painter.restore()
