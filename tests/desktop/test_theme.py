"""Window themes measured on real pixels: every panel dark under dark, scrollbar handles that
stand out from the page, the system scheme followed, PDF page filters."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPalette
from PySide6.QtPdf import QPdfDocument
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QPlainTextEdit,
    QStyle,
    QStyleOptionButton,
    QStyleOptionSlider,
    QWidget,
)

from core.books.importer import import_book
from core.store.library import Library
from desktop.theme import (
    NIGHT_RANGE,
    THEMES,
    WINDOW_THEMES,
    apply_app_theme,
    clear_app_theme,
    current_app_theme,
    page_image_filter,
)
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window


@pytest.fixture(autouse=True)
def _leave_no_theme(qapp: QApplication) -> Iterator[None]:
    yield
    QGuiApplication.styleHints().unsetColorScheme()
    clear_app_theme(qapp)


def luminance(colour: QColor) -> float:
    """WCAG relative luminance, 0..1."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.red())
        + 0.7152 * channel(colour.green())
        + 0.0722 * channel(colour.blue())
    )


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def mean_colour(image: QImage) -> QColor:
    return image.scaled(
        1, 1, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation
    ).pixelColor(0, 0)


def region(shot: QImage, window: QWidget, widget: QWidget) -> QImage:
    top_left = widget.mapTo(window, QPoint(0, 0))
    return shot.copy(top_left.x(), top_left.y(), widget.width(), widget.height())


@pytest.fixture
def window(
    app: Any, library: Library, qtbot: Any, real_font: str, books_dir: Path, pdf_dir: Path
) -> Any:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    import_book(library, books_dir / "metamorphosis.txt")
    import_book(library, pdf_dir / "pdflatex-4-pages.pdf")
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    win.open_book(book.id, 5)
    win.library_panel.set_books(library.list_books())
    qtbot.waitUntil(lambda: win.library_panel.covers.made >= 3, timeout=20000)
    yield win
    close_window(qtbot, win)


def panels(win: Any) -> dict[str, QWidget]:
    return {
        "library": win.library_panel,
        "reader": win.reader,
        "side panel": win.reader.side,  # its tabs once had a style sheet that kept it light
        "chat": win.chat,
        "menu bar": win.menuBar(),
        "status bar": win.statusBar(),
    }


def test_dark_darkens_every_panel_and_light_lightens_them(
    window: Any, qapp: QApplication, qtbot: Any
) -> None:
    measured: dict[str, dict[str, float]] = {}
    # covers are the books' own pictures (a PDF's white first page): measure the panel itself
    window.library_panel.list_button.click()
    window.panes.set_side_visible(True)
    for name in ("light", "dark"):
        apply_app_theme(qapp, name)
        window.reader.set_theme(name)
        qtbot.wait(50)
        shot = window.grab().toImage()
        shot.save(str(Path(window.paths.data) / f"window-{name}.png"))
        measured[name] = {
            panel: mean_colour(region(shot, window, widget)).lightnessF()
            for panel, widget in panels(window).items()
        }
    for panel in measured["dark"]:
        assert measured["dark"][panel] < 0.3, f"{panel} stays light under dark: {measured}"
        assert measured["light"][panel] > 0.7, f"{panel} is dark under light: {measured}"
    assert current_app_theme() == "dark"


@pytest.mark.parametrize("name", ["light", "sepia", "dark", "contrast"])
def test_scrollbar_handles_stand_out_from_the_page(
    window: Any, qapp: QApplication, qtbot: Any, name: str
) -> None:
    apply_app_theme(qapp, name)
    window.reader.set_theme(name)
    # paged reading hides the page's scroll bar: scrolling shows it
    window.reader.set_typography(replace(window.reader.typography, layout="scroll"))
    page = QPlainTextEdit("\n".join(f"line {i}" for i in range(400)))
    qtbot.addWidget(page)
    page.resize(300, 300)
    page.show()
    qtbot.waitExposed(page)
    bars = {
        "reader": window.reader.view.verticalScrollBar(),
        "plain text": page.verticalScrollBar(),
    }
    for where, bar in bars.items():
        assert bar.isVisible() and bar.maximum() > 0, f"{where} has something to scroll"
        option = QStyleOptionSlider()
        bar.initStyleOption(option)
        handle = bar.style().subControlRect(
            QStyle.ComplexControl.CC_ScrollBar, option, QStyle.SubControl.SC_ScrollBarSlider, bar
        )
        image = bar.grab().toImage()
        colour = image.pixelColor(handle.center())
        background = bar.parentWidget().palette().color(QPalette.ColorRole.Base)
        if where == "reader":
            background = QColor(THEMES[name].background)
        assert contrast(colour, background) >= 2.0, (
            f"{where} handle {colour.name()} on {background.name()} in {name}"
        )


@pytest.mark.parametrize("name", ["light", "sepia", "dark", "contrast"])
def test_an_empty_check_box_shows_its_edge(qapp: QApplication, qtbot: Any, name: str) -> None:
    """Fusion outlines a check box in the window colour darkened: on the dark window that edge
    was all but invisible (the reader's "Finished" box looked like plain text)."""
    apply_app_theme(qapp, name)
    box = QCheckBox("Finished")
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    option = QStyleOptionButton()
    box.initStyleOption(option)
    edge = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    image = box.grab().toImage()
    window = QColor(WINDOW_THEMES[name].window)
    colours = [image.pixelColor(edge.left(), y) for y in range(edge.top() + 3, edge.bottom() - 2)]
    best = max(contrast(c, window) for c in colours)
    assert best >= 1.8, f"check box edge on {window.name()} in {name}: {best:.2f}"


def test_selection_and_text_colours_are_legible_in_every_theme() -> None:
    for colours in WINDOW_THEMES.values():
        k = colours
        assert contrast(QColor(k.text), QColor(k.base)) >= 7, k.name
        assert contrast(QColor(k.text), QColor(k.window)) >= 7, k.name
        assert contrast(QColor(k.highlighted_text), QColor(k.highlight)) >= 4.5, k.name
        assert contrast(QColor(k.error), QColor(k.window)) >= 4.5, k.name
        assert contrast(QColor(k.dim_text), QColor(k.base)) >= 3, k.name
    highlights = {c.highlight for c in WINDOW_THEMES.values()}
    assert len(highlights) == len(WINDOW_THEMES)  # each theme its own selection colour


def test_the_palette_reaches_widgets_and_errors_use_the_error_colour(
    qapp: QApplication, window: Any
) -> None:
    apply_app_theme(qapp, "sepia")
    QApplication.processEvents()  # the new palette reaches widgets through events
    panel = window.library_panel
    assert panel.filter.palette().color(QPalette.ColorRole.Base) == QColor("#f4ecd8")
    assert panel.view.palette().color(QPalette.ColorRole.Highlight) == QColor("#a0622a")
    panel.show_errors(["x.epub is damaged."])
    shot = panel.error.grab().toImage()
    reds = [
        shot.pixelColor(x, y)
        for y in range(shot.height())
        for x in range(shot.width())
        if shot.pixelColor(x, y).red() - shot.pixelColor(x, y).blue() > 60
    ]
    assert reds, "the error text is drawn in the theme's red"


def test_system_follows_the_colour_scheme(
    qapp: QApplication, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the offscreen platform has no colour scheme of its own (setColorScheme is ignored), so
    # the system's answer is replaced and its change signal sent as the desktop would
    import desktop.theme as theme

    scheme = {"now": Qt.ColorScheme.Dark}
    monkeypatch.setattr(theme, "system_scheme", lambda: scheme["now"])
    hints = QGuiApplication.styleHints()
    assert apply_app_theme(qapp, "system") == "dark"
    assert qapp.palette().color(QPalette.ColorRole.Window) == QColor(WINDOW_THEMES["dark"].window)
    scheme["now"] = Qt.ColorScheme.Light
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    qtbot.waitUntil(lambda: current_app_theme() == "light", timeout=2000)
    assert qapp.palette().color(QPalette.ColorRole.Window) == QColor(WINDOW_THEMES["light"].window)
    apply_app_theme(qapp, "sepia")  # a chosen theme stays when the system changes
    scheme["now"] = Qt.ColorScheme.Dark
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.wait(50)
    assert current_app_theme() == "sepia"
    scheme["now"] = Qt.ColorScheme.Unknown
    assert apply_app_theme(qapp, "system") == "light", "no answer from the system: light"


def test_unknown_theme_is_refused(qapp: QApplication) -> None:
    with pytest.raises(ValueError, match="unknown theme 'blue'"):
        apply_app_theme(qapp, "blue")


# PDF pages ------------------------------------------------------------------------------------


def render_page(path: Path, width: int = 600, page: int = 0) -> QImage:
    doc = QPdfDocument()
    assert doc.load(str(path)) == QPdfDocument.Error.None_
    points = doc.pagePointSize(page)
    size = QSize(width, round(width * points.height() / points.width()))
    image = doc.render(page, size)
    doc.close()
    assert not image.isNull()
    return image


def test_night_mode_inverts_a_real_page(pdf_dir: Path) -> None:
    night = page_image_filter("dark")
    assert night is not None
    page = render_page(pdf_dir / "pdflatex-4-pages.pdf")
    assert page.hasAlphaChannel(), "QtPdf leaves the paper transparent: the filter copes"
    out = night(page)
    assert out.size() == page.size()
    low, high = NIGHT_RANGE
    paper = out.pixelColor(5, 5)
    assert abs(paper.red() - low) <= 2 and paper.red() == paper.green() == paper.blue()
    assert mean_colour(out).lightness() < 70
    opaque = QImage(page.size(), QImage.Format.Format_RGB32)
    opaque.fill(QColor("white"))
    from PySide6.QtGui import QPainter

    p = QPainter(opaque)
    p.drawImage(0, 0, page)
    p.end()
    ink = [
        (x, y)
        for y in range(0, page.height(), 2)
        for x in range(0, page.width(), 2)
        if opaque.pixelColor(x, y).lightness() < 100
    ]
    assert len(ink) > 500, "the page has text"
    assert all(out.pixelColor(x, y).lightness() > 130 for x, y in ink), "text turns light"
    assert max(out.pixelColor(x, y).lightness() for x, y in ink) <= high + 2


def test_night_mode_keeps_hues(books_dir: Path) -> None:
    night = page_image_filter("dark")
    assert night is not None
    swatches = QImage(60, 20, QImage.Format.Format_RGB32)
    for i, colour in enumerate(("#e02020", "#20a020", "#2040e0")):
        for x in range(i * 20, i * 20 + 20):
            for y in range(20):
                swatches.setPixelColor(x, y, QColor(colour))
    out = night(swatches)
    for i, colour in enumerate(("#e02020", "#20a020", "#2040e0")):
        before, after = QColor(colour), out.pixelColor(i * 20 + 10, 10)
        assert abs(before.hslHue() - after.hslHue()) <= 12, (colour, after.name())
        assert after.hslSaturation() > 60
    # and on a real picture (the fixtures' PDFs are black and white: Alice's cover is not)
    from core.books.covers import epub_cover_bytes

    page = QImage.fromData(epub_cover_bytes(books_dir / "alice_in_wonderland.epub") or b"")
    assert not page.isNull()
    filtered = night(page)
    diffs = []
    for y in range(0, page.height(), 4):
        for x in range(0, page.width(), 4):
            a = page.pixelColor(x, y)
            if a.hslSaturation() > 90 and 50 < a.lightness() < 205:
                b = filtered.pixelColor(x, y)
                d = abs(a.hslHue() - b.hslHue())
                diffs.append(min(d, 360 - d))
    assert len(diffs) > 100, "the picture has coloured pixels"
    diffs.sort()
    assert diffs[len(diffs) // 2] <= 15, "median hue shift"


def test_sepia_tint_and_light_is_untouched() -> None:
    sepia = page_image_filter("sepia")
    assert sepia is not None and page_image_filter("light") is None
    assert page_image_filter("no such theme") is None
    image = QImage(20, 10, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    for x in range(10):
        for y in range(10):
            image.setPixelColor(x, y, QColor("black"))
    out = sepia(image)
    paper, ink = out.pixelColor(15, 5), out.pixelColor(5, 5)
    target = QColor(THEMES["sepia"].background)
    assert abs(paper.red() - target.red()) <= 3 and abs(paper.blue() - target.blue()) <= 3
    assert ink.lightness() < 70 and ink.red() > ink.blue(), "ink turns dark brown"


def test_a_pdf_page_follows_the_window_theme(
    app: Any, library: Library, pdf_dir: Path, qtbot: Any, qapp: QApplication, real_font: str
) -> None:
    """The dark choice reaches PDFs: the page is drawn as a night page, and back."""
    from desktop.reader.pdf_view import PdfView

    book = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    try:
        win.open_book(book.id, 1)
        view = win.reader.view
        assert isinstance(view, PdfView)

        def page_lightness() -> float:
            qtbot.waitUntil(lambda: view.image_for(0) is not None, timeout=10000)
            image = view.image_for(0)
            assert image is not None
            # the canvas paints a white sheet under the page (QtPdf leaves paper transparent)
            sheet = QImage(image.size(), QImage.Format.Format_RGB32)
            sheet.fill(QColor("white"))
            painter = QPainter(sheet)
            painter.drawImage(0, 0, image)
            painter.end()
            return mean_colour(sheet).lightnessF()

        win.set_theme("light")
        light = page_lightness()
        win.set_theme("dark")
        dark = page_lightness()
        assert light > 0.8 and dark < 0.35, (light, dark)
        win.set_theme("light")
        assert page_lightness() > 0.8
    finally:
        clear_app_theme(qapp)
        close_window(qtbot, win)
