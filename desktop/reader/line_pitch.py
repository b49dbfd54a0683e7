"""One line pitch per paragraph, from the fonts the book asks for (issue 39, item 7).

Qt sets a paragraph's ``line-height: 125%`` as a proportion of the lines' natural height, and
that height counts every font the line uses, fallbacks included: one "⸺" (U+2E3A, two-em dash)
that the body font lacks is drawn from a fallback with a taller ascent and descent, and Qt
then spaces the whole paragraph wider (Liberation Serif at 13 pt with Source Serif 4 as the
fallback: 26.6 px → 33.6 px). calibre keeps the paragraph's spacing.

So a plain paragraph of text gets the same pitch as a fixed height in pixels: the proportion
times the natural height of the fonts its text asks for (measured on a letter they all have),
which a fallback glyph cannot change. Paragraphs that hold a picture or an inline object, mix
sizes (a drop cap, a big first word) or carry their own line height (ruby, the book's verse)
keep Qt's proportional spacing: they may need to grow.
"""

from __future__ import annotations

from PySide6.QtGui import (
    QFont,
    QTextBlock,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
    QTextLayout,
)

_NATURAL: dict[tuple[object, ...], float] = {}  # font → the height of a line of it alone

# sizes within this many pixels count as one (rounding of em sizes)
SAME_HEIGHT_PX = 0.5


def natural_height(font: QFont) -> float:
    """The height Qt gives a line of ``font`` when no other font takes part in it."""
    key = (font.family(), font.pointSizeF(), font.pixelSize(), font.weight(), font.italic())
    if key not in _NATURAL:
        layout = QTextLayout("x", font)
        layout.beginLayout()
        line = layout.createLine()
        line.setLineWidth(1000.0)
        layout.endLayout()
        _NATURAL[key] = line.height()
    return _NATURAL[key]


def _text_height(block_font: QFont, block: QTextBlock) -> float | None:
    """The one natural height of the block's text fragments, or None when the block holds
    an object (a picture) or text of different heights."""
    heights: list[float] = []
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if fragment.isValid():
            fmt = fragment.charFormat()
            if fmt.isImageFormat() or fmt.objectType() != 0:
                return None
            heights.append(natural_height(fmt.font().resolve(block_font)))
        it += 1
    if not heights:
        return None
    if max(heights) - min(heights) > SAME_HEIGHT_PX:
        return None
    return max(heights)


def fix_line_pitch(doc: QTextDocument, start: int, end: int, percent: float) -> int:
    """Give each plain paragraph between two document positions whose line height is
    ``percent`` % (the page's style) a fixed height of the same pitch; returns how many."""
    default = doc.defaultFont()
    block = doc.findBlock(start)
    fixed = 0
    edit = QTextCursor(doc)
    edit.beginEditBlock()  # laid out once, at the end, not after each paragraph
    while block.isValid() and block.position() <= end:
        fmt = block.blockFormat()
        if (
            fmt.lineHeightType() == QTextBlockFormat.LineHeightTypes.ProportionalHeight.value
            and abs(fmt.lineHeight() - percent) < 0.01
            and block.length() > 1
        ):
            height = _text_height(block.charFormat().font().resolve(default), block)
            if height is not None:
                fmt.setLineHeight(
                    height * percent / 100, QTextBlockFormat.LineHeightTypes.FixedHeight.value
                )
                edit.setPosition(block.position())
                edit.setBlockFormat(fmt)
                fixed += 1
        block = block.next()
    edit.endEditBlock()
    return fixed
