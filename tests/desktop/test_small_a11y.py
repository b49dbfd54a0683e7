"""Smaller things a screen reader or a finger meets (issue 43, item 7): Settings › Model is a
labelled combo box with a named edit field; the side panel's tab-bar scroll arrows are at least
24 × 24 px (WCAG 2.5.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QLabel, QToolButton

from desktop.settings_dialog import SettingsDialog
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


def test_tab_bar_scroll_arrows_are_big_enough(window: Any, books_dir: Path, qtbot: Any) -> None:
    open_alice(window, books_dir, page=3, side=True)
    window.set_theme("light")  # the app's own style (ThemeStyle), as it runs
    side = window.reader.side
    side.tabBar().setUsesScrollButtons(True)
    side.resize(90, side.height())
    side.tabBar().resize(60, side.tabBar().height())
    qtbot.wait(50)
    arrows = list(side.tabBar().findChildren(QToolButton))
    assert arrows, "the tab bar has scroll arrows"
    bar = side.tabBar().rect()
    for arrow in arrows:
        hint = arrow.minimumSizeHint().expandedTo(arrow.minimumSize())
        assert hint.width() >= 24 and hint.height() >= 24, (hint.width(), hint.height())
        # laid out whole: inside the bar, the two side by side (not overlapping by 9 px, the
        # right one cut to 16 px by the bar's edge, as with Fusion's 16-px layout)
        assert bar.contains(arrow.geometry()), (arrow.geometry(), bar)
    left, right = sorted((a.geometry() for a in arrows), key=lambda g: g.left())
    shared = max(0, left.right() - right.left() + 1)  # Qt lays them 1 px over each other
    assert left.width() - shared >= 24 and right.width() >= 24, (left, right)


def test_companion_status_lines_are_named_by_their_text(window: Any) -> None:
    from desktop.companions.cards_panel import CardsPanel

    panel = CardsPanel(window.library)
    panel.status.setText("1 due of 1")
    iface = QAccessible.queryAccessibleInterface(panel.status)
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
