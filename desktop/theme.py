"""Reading themes for reflowable books and highlight colours."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str
    link: str


THEMES = {
    "light": Theme("light", "#ffffff", "#1d1d1f", "#0b57d0"),
    "sepia": Theme("sepia", "#f4ecd8", "#5b4636", "#8a4b08"),
    "dark": Theme("dark", "#1e1e1e", "#dcdcdc", "#8ab4f8"),
}

HIGHLIGHT_RGBA = {
    "yellow": (255, 221, 87, 110),
    "green": (122, 220, 120, 110),
    "blue": (120, 180, 255, 110),
    "pink": (255, 140, 190, 110),
    "purple": (190, 140, 255, 110),
}
MARK_RGBA = (255, 170, 0, 140)
SELECTION_RGBA = (60, 130, 240, 90)


def highlight_colour(name: str) -> QColor:
    return QColor(*HIGHLIGHT_RGBA.get(name, HIGHLIGHT_RGBA["yellow"]))


def page_css(theme: Theme, font_size: int) -> str:
    return (
        f"body {{ color: {theme.text}; background: {theme.background}; font-size: {font_size}pt; }}"
        f" a {{ color: {theme.link}; }} p {{ margin-bottom: 0.7em; line-height: 140%; }}"
        " h1, h2, h3 { margin-top: 0.6em; } blockquote { margin-left: 1.5em; font-style: italic; }"
        " pre { font-family: monospace; }"
    )
