"""Contrast: every text and control edge of every theme meets WCAG AA (4.5 : 1 for text,
3 : 1 for edges), with the ratio computed as WCAG defines it."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from desktop.accessibility import contrast
from desktop.chat.render import MIN_CONTRAST, Colours
from desktop.theme import APP_THEMES, THEMES, WINDOW_THEMES, window_palette


def test_contrast_ratio_matches_wcag() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1.0)


@pytest.mark.parametrize("name", [n for n in APP_THEMES if n != "system"])
def test_every_text_and_edge_has_enough_contrast(name: str, qapp: QApplication) -> None:
    w = WINDOW_THEMES[name]
    page = THEMES[name]
    text_pairs = {
        "text on panels": (w.text, w.window),
        "text on fields": (w.text, w.base),
        "text on buttons": (w.text, w.button),
        "text on alternate rows": (w.text, w.alt_base),
        "selected text": (w.highlighted_text, w.highlight),
        "links": (w.link, w.base),
        "placeholders": (w.dim_text, w.base),
        "placeholders on panels": (w.dim_text, w.window),
        "errors": (w.error, w.window),
        "tooltips": (w.text, w.tooltip),
        "page text": (page.text, page.background),
        "page links": (page.link, page.background),
    }
    chat = Colours.from_palette(window_palette(w))
    question_bg = chat.question_bg
    text_pairs |= {
        "chat text": (chat.text, w.base),
        "speaker labels and Sources": (chat.muted, w.base),
        "speaker label on a question": (chat.muted, question_bg),
        "token meter": (chat.muted, w.window),
        "chat quotes": (chat.quote, w.base),
        "chat links": (chat.link, w.base),
        "chat errors": (chat.error, w.base),
        "chat warnings": (chat.warn, w.base),
        "page chips": (chat.chip_fg, chat.chip_bg),
        "code": (chat.text, chat.code_bg),
    }
    low = {
        what: round(contrast(fg, bg), 2)
        for what, (fg, bg) in text_pairs.items()
        if contrast(fg, bg) < 4.5
    }
    assert not low, f"{name}: text below 4.5 : 1: {low}"
    assert MIN_CONTRAST >= 4.5
    edges = {
        "scroll handles on the page": (w.scroll_handle, w.base),
        "scroll handles on panels": (w.scroll_handle, w.window),
        "check box edges": (w.scroll_handle, w.window),
    }
    weak = {
        what: round(contrast(fg, bg), 2) for what, (fg, bg) in edges.items() if contrast(fg, bg) < 3
    }
    assert not weak, f"{name}: control edges below 3 : 1: {weak}"
