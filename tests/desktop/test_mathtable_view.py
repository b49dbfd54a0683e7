"""A matrix is drawn in rows and columns by Qt's text layout (issue 45, item 5)."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument, QTextTable

from core.books.htmlblocks import html_to_blocks
from core.books.pages import block_html
from tests.core.books.test_mathtable import MATRIX


def test_the_matrix_is_a_table_of_two_rows_and_two_columns(qapp) -> None:  # type: ignore[no-untyped-def]
    _, blocks = html_to_blocks(f"<html><body>{MATRIX}</body></html>")
    document = QTextDocument()
    document.setHtml("".join(block_html(b) for b in blocks))
    tables: list[QTextTable] = []
    frames = [document.rootFrame()]
    while frames:
        frame = frames.pop()
        if isinstance(frame, QTextTable):
            tables.append(frame)
        frames.extend(frame.childFrames())
    shapes = {(t.rows(), t.columns()) for t in tables}
    assert (2, 2) in shapes, shapes
    assert "1" in document.toPlainText() and "4" in document.toPlainText()
