"""Smaller things a screen reader or a finger meets (issue 43, item 7): Settings › Model is a
labelled combo box with a named edit field; the side panel's tab-bar scroll arrows are at least
24 × 24 px (WCAG 2.5.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QLabel, QToolButton

from desktop.window.settings_dialog import SettingsDialog
from tests.desktop.conftest import open_alice


def test_the_model_box_is_labelled_and_its_field_named(window: Any) -> None:
    dialog = SettingsDialog(window.paths, window)
    labels = [w for w in dialog.findChildren(QLabel) if w.buddy() is dialog.model]
    assert [w.text() for w in labels] == ["Model"]
    edit = dialog.model.lineEdit()
    assert edit is not None and edit.accessibleName() == "Model name"
    iface = QAccessible.queryAccessibleInterface(dialog.model)
    assert iface is not None
    related = iface.relations(QAccessible.RelationFlag.Label)
    assert any(r[0].text(QAccessible.Text.Name) == "Model" for r in related), related
    dialog.deleteLater()


def test_the_side_panel_tabs_are_targets_24_px_or_more_with_no_arrows(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    """WCAG 2.5.8: the side panel's tabs were a bar whose scroll arrows were 16 x 26 px; they
    are now buttons in rows (every name in sight, no arrows), each 24 x 24 px or more."""
    window.resize(1280, 800)
    open_alice(window, books_dir, page=3, side=True)
    window.set_theme("light")  # the app's own style (ThemeStyle), as it runs
    side = window.reader.side
    qtbot.waitUntil(lambda: side.rows is not None and side.rows.isVisible(), timeout=5000)
    assert not side.tabBar().isVisible()
    assert not [
        a
        for a in side.findChildren(QToolButton)
        if a.objectName().startswith("Scroll") and a.isVisible()
    ]
    rows = side.rows
    assert rows is not None and len(rows.buttons) == side.count()
    for button in rows.buttons:
        size = button.size()
        assert button.isVisible() and size.width() >= 24 and size.height() >= 24, (
            button.text(),
            size,
        )


def test_companion_status_lines_are_named_by_their_text(window: Any) -> None:
    from desktop.companions.cards_panel import CardsPanel

    panel = CardsPanel(window.library)
    panel.feed.status.setText("1 due of 1")
    iface = QAccessible.queryAccessibleInterface(panel.feed.status)
    assert iface is not None and iface.text(QAccessible.Text.Name) == "1 due of 1"
    assert iface.text(QAccessible.Text.Description) == "Cards status"
    panel.deleteLater()


def test_a_selected_tile_caption_reads_at_4_5_to_1_in_every_theme() -> None:
    from PySide6.QtGui import QColor, QPalette

    from desktop.accessibility import contrast
    from desktop.library.grid import CAPTION_ALPHA
    from desktop.theme import WINDOW_THEMES, window_palette

    def over(fg: QColor, bg: QColor, alpha: int) -> QColor:
        mix = [
            round(f * alpha / 255 + b * (1 - alpha / 255))
            for f, b in zip(fg.getRgb()[:3], bg.getRgb()[:3], strict=True)
        ]
        return QColor(*mix)

    for name, colours in WINDOW_THEMES.items():
        palette = window_palette(colours)
        tile = over(  # the selected tile's tint (grid.py: Highlight at alpha 70) on the base
            palette.color(QPalette.ColorRole.Highlight), palette.color(QPalette.ColorRole.Base), 70
        )
        caption = over(palette.color(QPalette.ColorRole.Text), tile, CAPTION_ALPHA)
        assert contrast(caption, tile) >= 4.5, (name, contrast(caption, tile))
