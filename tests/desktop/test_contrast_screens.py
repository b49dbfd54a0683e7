"""Contrast measured from screenshots (issue 43): the reader (with its side panel and the chat)
and the library, rendered offscreen in the light, sepia, dark and high-contrast themes; for
every text element on screen the background is the commonest colour of its box and the text
the colour in it farthest from that (the ink of the glyphs' stems), and their WCAG ratio
must be at least 4.5 : 1. Palettes are checked colour by colour in
``test_accessibility_contrast.py``; this checks what is actually drawn (alpha blends, style
sheets, tints, a selected row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

from desktop.accessibility import Notice
from tests.desktop.conftest import open_alice

THEMES = ("light", "sepia", "dark", "contrast")


def pixels(image: QImage) -> np.ndarray:
    """The image as rows of packed 0xRRGGBB integers."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), np.uint32)
    return data.reshape(image.height(), image.bytesPerLine() // 4)[:, : image.width()] & 0xFFFFFF


def luminance(packed: np.ndarray) -> np.ndarray:
    rgb = np.stack([(packed >> s) & 0xFF for s in (16, 8, 0)], axis=-1) / 255.0
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def measured(box: np.ndarray) -> tuple[float, int] | None:
    """(the text's contrast ratio, how many ink pixels) in a box of pixels, or None when
    nothing is drawn on its background."""
    values, counts = np.unique(box, return_counts=True)
    background = values[np.argmax(counts)]
    lum = luminance(values)
    bg = luminance(np.array([background]))[0]
    ratio = (np.maximum(lum, bg) + 0.05) / (np.minimum(lum, bg) + 0.05)
    ink = counts[ratio > 1.5].sum()
    kept = ratio[counts >= 3]  # a colour drawn once or twice is an edge's blend, not ink
    if ink < 12 or not len(kept):
        return None
    return float(kept.max()), int(ink)


def text_boxes(window: QWidget) -> list[tuple[str, QRect]]:
    """What shows text in ``window``, each with the box (in the window) where it is drawn."""
    out: list[tuple[str, QRect]] = []

    def add(widget: QWidget, what: str, rect: QRect) -> None:
        visible = widget.visibleRegion().boundingRect()
        rect = rect.intersected(visible)
        if rect.width() >= 6 and rect.height() >= 8:
            out.append((what, QRect(widget.mapTo(window, rect.topLeft()), rect.size())))

    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or not widget.isEnabled() or isinstance(widget, Notice):
            continue
        name = f"{type(widget).__name__} {widget.accessibleName() or widget.objectName()}"
        if isinstance(widget, QLabel) and widget.text() and widget.pixmap().isNull():
            add(widget, f"{name} “{widget.text()[:30]}”", widget.contentsRect())
        elif isinstance(widget, QAbstractButton) and widget.text():
            add(widget, f"{name} “{widget.text()[:30]}”", widget.rect().adjusted(3, 3, -3, -3))
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                add(widget, f"tab “{widget.tabText(i)}”", widget.tabRect(i).adjusted(2, 2, -2, -2))
        elif isinstance(widget, QLineEdit) or (
            isinstance(widget, QComboBox) and widget.currentText()
        ):
            add(widget, name, widget.rect().adjusted(3, 3, -3, -3))
        elif isinstance(widget, QTextEdit) and widget.toPlainText().strip():
            add(widget.viewport(), name, widget.viewport().rect())
        elif isinstance(widget, QAbstractItemView) and getattr(widget, "grid_mode", False):
            for row in range(widget.model().rowCount()):
                for i, band in enumerate(caption_bands(widget, row)):
                    add(widget.viewport(), f"{name} tile {row} line {i}", band)
        elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
            model = widget.model()
            for row in range(min(model.rowCount(), 12)):
                rect = widget.visualRect(model.index(row, 0))
                add(widget.viewport(), f"{name} row {row}", rect)
    return out


def caption_bands(grid: Any, row: int) -> list[QRect]:
    """The lines of text under a library tile's cover (the cover would hide a faint line)."""
    from desktop.library.grid import TILE_PAD

    tile = grid.visualRect(grid.model().index(row, 0))
    top = tile.top() + TILE_PAD + grid.cover_size().height() + 5
    line = grid.fontMetrics().height()
    bands = []
    while top + line <= tile.bottom() - 2:
        bands.append(QRect(tile.left() + TILE_PAD, top, tile.width() - 2 * TILE_PAD, line))
        top += line
    return bands


def low_contrast(window: QWidget, theme: str) -> list[str]:
    QApplication.processEvents()
    shot = pixels(window.grab().toImage())
    low = []
    for what, rect in text_boxes(window):
        box = shot[rect.top() : rect.bottom() + 1, rect.left() : rect.right() + 1]
        found = measured(box)
        if found is not None and found[0] < 4.5:
            low.append(f"{theme}: {what}: {found[0]:.2f}")
    return low


def test_all_text_on_the_main_screens_reads_at_4_5_to_1_in_every_theme(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir, page=5, read_to=5, side=True)
    low: list[str] = []
    counted = 0
    for theme in THEMES:
        window.set_theme(theme)
        window.panes.show_reader()
        QApplication.processEvents()  # the palette change reaches the chat: it redraws
        qtbot.waitUntil(lambda: not window.chat._loading)  # the chat drawn in the new colours
        counted += len(text_boxes(window))
        low += low_contrast(window, theme)
        window.panes.show_library()
        grid = window.library_panel.view  # the open book's tile, selected
        grid.setCurrentIndex(grid.model().index(0, 0))
        low += low_contrast(window, f"{theme} library")
    window.panes.show_reader()
    assert counted > 40, "the screens show their text"
    assert not low, "\n".join(low)


def test_the_measure_reads_the_ink_of_drawn_text(real_font: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QFont, QPainter

    from desktop.accessibility import contrast

    for ink, paper in (("#767676", "#ffffff"), ("#5b4636", "#f4ecd8"), ("#8a8a8a", "#1e1e1e")):
        image = QImage(160, 24, QImage.Format.Format_RGB32)
        image.fill(QColor(paper))
        painter = QPainter(image)
        painter.setFont(QFont(real_font, 10))
        painter.setPen(QColor(ink))
        painter.drawText(image.rect(), int(Qt.AlignmentFlag.AlignCenter), "Faint words here")
        painter.end()
        found = measured(pixels(image))
        assert found is not None
        assert abs(found[0] - contrast(ink, paper)) < 0.15, (ink, paper, found)
