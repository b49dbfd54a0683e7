"""How a highlight is drawn in a text view: its colour as a background, or as an underline or
a line through the words (an underline in the highlight's colour, a mid-tone that shows on light and
dark pages; a line through in the text's colour over a faint wash of the highlight's)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat

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
