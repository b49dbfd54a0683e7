"""An inline ``<span dir="rtl">`` is drawn right to left (issue 45, item 8): its text is
isolated in that direction, which Qt's line layout follows."""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextLayout

from core.books.htmlblocks import html_to_blocks

PAGE = '<html><body><p>x <span dir="rtl">ab שלום</span> y</p></body></html>'


def positions(text: str) -> list[float]:
    layout = QTextLayout(text, QFont())
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(2000)
    layout.endLayout()
    return [line.cursorToX(i)[0] for i in range(len(text))]


def test_the_span_runs_right_to_left(qapp) -> None:  # type: ignore[no-untyped-def]
    _, blocks = html_to_blocks(PAGE)
    text = blocks[0].text
    assert text == "x \u2067ab שלום\u2069 y"
    x = positions(text)
    # right to left: the Hebrew word (which follows "ab" in the text) is drawn to its left
    assert x[text.index("ש")] < x[text.index("a")]
    plain = "x ab שלום y"  # without the span's direction "ab" comes first, on the left
    y = positions(plain)
    assert y[plain.index("ש")] > y[plain.index("a")]


def test_other_directions_and_plain_spans() -> None:
    _, blocks = html_to_blocks('<p><span dir="ltr">a</span><span>b</span><i dir="x">c</i></p>')
    assert blocks[0].text == "\u2066a\u2069bc"
