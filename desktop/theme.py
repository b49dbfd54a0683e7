"""Themes: the page colours of reflowable books, highlight colours, and the colours of the
whole window (light, sepia, dark, or whatever the system uses).

``apply_app_theme`` sets one palette on the application, so every panel (library, contents,
chat, dialogs) follows, and Fusion with scrollbar handles that stand out from the page in
every theme (``ThemeStyle``). No style sheet: re-polishing every widget for one costs about
ten times more than a palette change. ``page_image_filter`` gives the PDF view a night
mode and a sepia tint computed by Qt's compositing, in C++.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPalette
from PySide6.QtWidgets import (
    QProxyStyle,
    QStyle,
    QStyleOption,
    QStyleOptionComplex,
    QStyleOptionSlider,
    QWidget,
)

if TYPE_CHECKING:
    from desktop.reader.typography import Typography


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
    "contrast": Theme("contrast", "#000000", "#ffffff", "#ffff00"),
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


def page_css(theme: Theme, font_size: int, typography: Typography | None = None) -> str:
    """The default style sheet of a book's page. With ``typography`` (a ``ReaderSettings``):
    its font, spacing and indent, and the book's own styles kept or flattened."""
    if typography is None:
        return (
            f"body {{ color: {theme.text}; background: {theme.background};"
            f" font-size: {font_size}pt; }}"
            f" a {{ color: {theme.link}; }} p {{ margin-bottom: 0.7em; line-height: 140%; }}"
            " h1, h2, h3 { margin-top: 0.6em; }"
            " blockquote { margin-left: 1.5em; font-style: italic; }"
            " pre { font-family: monospace; }"
        )
    t = typography
    line = round(t.line_spacing * 100)
    indent = round(t.paragraph_indent * font_size * 96 / 72)  # Qt takes text-indent in px only
    css = (
        f"body {{ color: {theme.text}; background: {theme.background}; font-size: {font_size}pt; }}"
        f" a {{ color: {theme.link}; }}"
        f" p {{ margin-top: 0; margin-bottom: {t.paragraph_spacing:g}em; line-height: {line}%;"
        f" text-indent: {indent}px; }}"
        f" li, td, th {{ line-height: {line}%; }}"
        " pre { font-family: monospace; }"
    )
    if t.book_styles:
        return css + (
            " h1 { font-size: 1.6em; margin-top: 1.2em; margin-bottom: 0.6em; }"
            " h2 { font-size: 1.35em; margin-top: 1.0em; margin-bottom: 0.5em; }"
            " h3 { font-size: 1.15em; margin-top: 0.8em; margin-bottom: 0.4em; }"
            " h4, h5, h6 { font-size: 1em; margin-top: 0.6em; }"
            " blockquote { margin-left: 2em; margin-right: 2em; }"
            " small { font-size: 0.85em; }"
        )
    # the book's look flattened: one size, one weight, no slant, no indented quotes
    return css + (
        " h1, h2, h3, h4, h5, h6 { font-size: 1em; font-weight: normal; margin-top: 0; }"
        " i, em, cite, q { font-style: normal; } b, strong { font-weight: normal; }"
        " small, sub, sup { font-size: 1em; vertical-align: baseline; }"
        " blockquote { margin-left: 0; margin-right: 0; }"
    )


# the whole window ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowColours:
    """The colours of every panel in one theme."""

    name: str
    window: str  # panels, toolbars
    base: str  # lists, text fields, the page
    alt_base: str
    text: str
    dim_text: str  # placeholders, disabled text
    button: str
    highlight: str  # selection background
    highlighted_text: str
    link: str
    border: str
    scroll_handle: str  # must stand out from ``base`` and ``window``
    scroll_handle_hover: str
    error: str  # the palette's BrightText: error labels use it as their foreground role
    tooltip: str


WINDOW_THEMES = {
    "light": WindowColours(
        "light",
        window="#f3f3f4",
        base="#ffffff",
        alt_base="#f6f6f7",
        text="#1d1d1f",
        dim_text="#6e6e73",
        button="#ebebed",
        highlight="#2f6fdf",
        highlighted_text="#ffffff",
        link="#0b57d0",
        border="#c8c8cc",
        scroll_handle="#86868c",
        scroll_handle_hover="#6e6e75",
        error="#b3261e",
        tooltip="#fffbe6",
    ),
    "sepia": WindowColours(
        "sepia",
        window="#ebe0c8",
        base="#f4ecd8",
        alt_base="#efe5cd",
        text="#4a3829",
        dim_text="#6f5a45",
        button="#e2d5b8",
        highlight="#a0622a",
        highlighted_text="#fffaf0",
        link="#8a4b08",
        border="#c9b895",
        scroll_handle="#8a7352",
        scroll_handle_hover="#6f5a45",
        error="#a3281a",
        tooltip="#fbf5e6",
    ),
    "dark": WindowColours(
        "dark",
        window="#252528",
        base="#1e1e1e",
        alt_base="#262629",
        text="#dcdcdc",
        dim_text="#8e8e93",
        button="#333337",
        highlight="#3d6ec9",
        highlighted_text="#ffffff",
        link="#8ab4f8",
        border="#3c3c41",
        scroll_handle="#74747a",
        scroll_handle_hover="#9a9aa0",
        error="#f2b8b5",
        tooltip="#333337",
    ),
    # for low vision: white on black, yellow links, every edge white
    "contrast": WindowColours(
        "contrast",
        window="#000000",
        base="#000000",
        alt_base="#0d0d0d",
        text="#ffffff",
        dim_text="#c8c8c8",
        button="#000000",
        highlight="#ffd700",
        highlighted_text="#000000",
        link="#ffff00",
        border="#ffffff",
        scroll_handle="#c8c8c8",
        scroll_handle_hover="#ffffff",
        error="#ff9a8a",
        tooltip="#000000",
    ),
}
APP_THEMES = ("system", "light", "sepia", "dark", "contrast")
THEME_LABELS = {
    "system": "System theme (follows the desktop)",
    "light": "Light theme",
    "sepia": "Sepia theme",
    "dark": "Dark theme",
    "contrast": "High contrast theme",
}

_state: dict[str, object] = {"chosen": None, "applied": None, "listening": False}


def resolve_theme(name: str) -> str:
    """ "system" becomes "contrast" when the system asks for more contrast, else "dark" or
    "light" from its colour scheme."""
    if name not in APP_THEMES:
        raise ValueError(f"unknown theme {name!r}; choose one of {', '.join(APP_THEMES)}")
    if name != "system":
        return name
    if system_wants_contrast():
        return "contrast"
    return "dark" if system_scheme() == Qt.ColorScheme.Dark else "light"


def system_wants_contrast() -> bool:
    """Whether the desktop asks for high contrast (Qt ≥ 6.10 says so where it can tell)."""
    hints = QGuiApplication.styleHints()
    try:
        return bool(
            hints.accessibility().contrastPreference() == Qt.ContrastPreference.HighContrast
        )
    except AttributeError:  # an older Qt cannot tell
        return False


def system_scheme() -> Qt.ColorScheme:
    """The desktop's colour scheme (Unknown where the platform does not say)."""
    return QGuiApplication.styleHints().colorScheme()


def window_palette(colours: WindowColours) -> QPalette:
    palette = QPalette()
    c = QColor
    Role = QPalette.ColorRole
    for role, value in (
        (Role.Window, colours.window),
        (Role.WindowText, colours.text),
        (Role.Base, colours.base),
        (Role.AlternateBase, colours.alt_base),
        (Role.Text, colours.text),
        (Role.Button, colours.button),
        (Role.ButtonText, colours.text),
        (Role.BrightText, colours.error),
        (Role.Highlight, colours.highlight),
        (Role.HighlightedText, colours.highlighted_text),
        (Role.Link, colours.link),
        (Role.LinkVisited, colours.link),
        (Role.ToolTipBase, colours.tooltip),
        (Role.ToolTipText, colours.text),
        (Role.PlaceholderText, colours.dim_text),
        (Role.Accent, colours.highlight),
    ):
        palette.setColor(role, c(value))
    dark = QColor(colours.base).lightness() < 128
    button = c(colours.button)
    palette.setColor(Role.Light, button.lighter(130 if dark else 112))
    palette.setColor(Role.Midlight, button.lighter(115 if dark else 106))
    palette.setColor(Role.Mid, c(colours.border))
    palette.setColor(Role.Dark, button.darker(150))
    palette.setColor(Role.Shadow, c("#000000"))
    disabled = QPalette.ColorGroup.Disabled
    for role in (Role.Text, Role.WindowText, Role.ButtonText):
        palette.setColor(disabled, role, c(colours.dim_text))
    palette.setColor(disabled, Role.Highlight, c(colours.border))
    inactive = QPalette.ColorGroup.Inactive
    palette.setColor(inactive, Role.Highlight, c(colours.highlight))
    palette.setColor(inactive, Role.HighlightedText, c(colours.highlighted_text))
    return palette


class ThemeStyle(QProxyStyle):
    """Fusion (the one built-in style that honours every palette colour on every platform)
    with scrollbar handles in the theme's handle colour, which stands out from the page: plain
    Fusion draws them in the button colour, nearly white on a white page. Drawing from the
    palette, not a style sheet, keeps a theme switch down to a palette change."""

    def __init__(self) -> None:
        super().__init__("Fusion")
        self.handle = QColor(WINDOW_THEMES["light"].scroll_handle)
        self.handle_hover = QColor(WINDOW_THEMES["light"].scroll_handle_hover)

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        # Fusion outlines text fields and framed panels in the window colour darkened: about
        # 2 : 1 on a light page and nothing on black. Draw the edge again in the handle colour
        # (at least 3 : 1 in every theme, WCAG's bar for a control's boundary).
        if (
            element
            in (
                QStyle.PrimitiveElement.PE_FrameLineEdit,
                QStyle.PrimitiveElement.PE_Frame,
            )
            and option.rect.width() > 4
        ):
            painter.save()
            painter.setPen(self.handle)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5))
            painter.restore()
        # push buttons and combo boxes too (Fusion's rounded edge, in the handle colour)
        if element == QStyle.PrimitiveElement.PE_PanelButtonCommand and option.rect.width() > 4:
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setPen(self.handle)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5), 2, 2)
            painter.restore()
        # Fusion outlines a check box in the window colour darkened, which vanishes on a dark
        # window: draw the box's edge again in the handle colour, which every theme makes
        # stand out from its panels.
        if element == QStyle.PrimitiveElement.PE_IndicatorCheckBox:
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setPen(self.handle)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5), 2, 2)
            painter.restore()

    def pixelMetric(self, metric: QStyle.PixelMetric, *args: Any) -> int:
        value = super().pixelMetric(metric, *args)  # tab-bar arrows: 25 px, 24 clear (2.5.8)
        return max(value, 25) if metric == QStyle.PixelMetric.PM_TabBarScrollButtonWidth else value

    def drawComplexControl(
        self,
        control: QStyle.ComplexControl,
        option: QStyleOptionComplex,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        if control == QStyle.ComplexControl.CC_ScrollBar and isinstance(option, QStyleOptionSlider):
            slider = QStyleOptionSlider(option)
            palette = QPalette(slider.palette)
            hover = bool(
                slider.state & QStyle.StateFlag.State_MouseOver
                and slider.activeSubControls & QStyle.SubControl.SC_ScrollBarSlider
            )
            palette.setColor(QPalette.ColorRole.Button, self.handle_hover if hover else self.handle)
            slider.palette = palette
            super().drawComplexControl(control, slider, painter, widget)
            return
        super().drawComplexControl(control, option, painter, widget)


def apply_app_theme(app: QGuiApplication, name: str) -> str:
    """Colour the whole window: ``name`` is "system", "light", "sepia" or "dark". Returns the
    theme applied. With "system" the window follows later changes of the system's scheme."""
    from PySide6.QtWidgets import QApplication

    resolved = resolve_theme(name)
    _state["chosen"] = name
    if not _state["listening"]:
        _state["listening"] = True
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: _follow_system(app))
        try:
            hints.accessibility().contrastPreferenceChanged.connect(
                lambda _preference: _follow_system(app)
            )
        except AttributeError:
            pass
    if _state["applied"] == resolved:
        return resolved
    colours = WINDOW_THEMES[resolved]
    if isinstance(app, QApplication):
        style = app.style()
        if not isinstance(style, ThemeStyle):
            style = ThemeStyle()
            app.setStyle(style)  # once: changing the style re-polishes every widget
        style.handle = QColor(colours.scroll_handle)
        style.handle_hover = QColor(colours.scroll_handle_hover)
    app.setPalette(window_palette(colours))
    _state["applied"] = resolved
    return resolved


def clear_app_theme(app: QGuiApplication) -> None:
    """Back to the platform's own style and palette (tests use it to leave no trace)."""
    from PySide6.QtWidgets import QApplication, QStyleFactory

    _state["chosen"] = _state["applied"] = None
    if isinstance(app, QApplication) and isinstance(app.style(), ThemeStyle):
        fusion = QStyleFactory.create("Fusion")
        app.setStyle(fusion)
        app.setPalette(fusion.standardPalette())


def _follow_system(app: QGuiApplication) -> None:
    if _state["chosen"] == "system":
        apply_app_theme(app, "system")


def current_app_theme() -> str | None:
    """The theme last applied ("light", "sepia", "dark" or "contrast"), or None before the
    first."""
    applied = _state["applied"]
    return applied if isinstance(applied, str) else None


# PDF pages ------------------------------------------------------------------------------------

NIGHT_RANGE = (30, 218)  # a night page: not pure black, text not pure white (less glare)


def _opaque(image: QImage) -> QImage:
    """The page as RGB32; transparent parts (QtPdf leaves unprinted areas so) become white."""
    if not image.hasAlphaChannel():
        return image.convertToFormat(QImage.Format.Format_RGB32)
    out = QImage(image.size(), QImage.Format.Format_RGB32)
    out.fill(QColor("white"))
    p = QPainter(out)
    p.drawImage(0, 0, image)
    p.end()
    return out


_LIFT = [0xFF000000 | (v << 16) | (v << 8) | v for v in (max(0, 255 - 2 * y) for y in range(256))]
_LOWER = [0xFF000000 | (v << 16) | (v << 8) | v for v in (max(0, 2 * y - 255) for y in range(256))]


def _from_luma(luma: QImage, table: list[int]) -> QImage:
    """An RGB32 image of ``table[Y]`` for each pixel's luma (a C++ palette lookup)."""
    indexed = QImage(
        luma.constBits(),
        luma.width(),
        luma.height(),
        luma.bytesPerLine(),
        QImage.Format.Format_Indexed8,
    )
    indexed.setColorTable(table)
    return indexed.convertToFormat(QImage.Format.Format_RGB32)


def _composite(dest: QImage, source: QImage, mode: QPainter.CompositionMode) -> None:
    p = QPainter(dest)
    p.setCompositionMode(mode)
    p.drawImage(0, 0, source)
    p.end()


def _subtract(dest: QImage, source: QImage) -> None:
    """dest = max(0, dest - source), channel by channel (invert, saturating add, invert)."""
    dest.invertPixels()
    _composite(dest, source, QPainter.CompositionMode.CompositionMode_Plus)
    dest.invertPixels()


def night_page(image: QImage) -> QImage:
    """Invert the lightness of a page and keep its colours: each pixel moves by 255 - 2·Y (Y
    its luma) on all three channels, so black text turns light, the white page dark, and a red
    figure stays red (a plain inversion would turn it cyan). Then the range is narrowed to
    ``NIGHT_RANGE`` so the page is dark grey, not black."""
    page = _opaque(image)
    luma = page.convertToFormat(QImage.Format.Format_Grayscale8)
    _composite(page, _from_luma(luma, _LIFT), QPainter.CompositionMode.CompositionMode_Plus)
    _subtract(page, _from_luma(luma, _LOWER))
    low, high = NIGHT_RANGE
    opacity = (high - low) / 255
    backdrop = round(low / (1 - opacity))
    out = QImage(page.size(), QImage.Format.Format_RGB32)
    out.fill(QColor(backdrop, backdrop, backdrop))
    p = QPainter(out)
    p.setOpacity(opacity)
    p.drawImage(0, 0, page)
    p.end()
    out.setDevicePixelRatio(image.devicePixelRatio())
    return out


def sepia_page(image: QImage) -> QImage:
    """Warm the page: black ink becomes dark brown (screen), white paper becomes sepia paper
    (multiply)."""
    page = _opaque(image)
    p = QPainter(page)
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_Screen)
    p.fillRect(page.rect(), QColor("#3b2a1c"))
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
    p.fillRect(page.rect(), QColor(THEMES["sepia"].background))
    p.end()
    page.setDevicePixelRatio(image.devicePixelRatio())
    return page


def page_image_filter(name: str) -> Callable[[QImage], QImage] | None:
    """The filter for rendered PDF pages in a reading theme; None means show pages as they are
    ("light", or an unknown name)."""
    return {"dark": night_page, "contrast": night_page, "sepia": sepia_page}.get(name)
