"""The look of reflowable books: font, size, spacing, indent, measure, justification, the
book's own styles; applied live from the Reading settings window, remembered in settings.toml
([reader]) with per-book overrides; bad values reported and replaced by the defaults."""

from __future__ import annotations

import statistics
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontInfo, QTextLayout
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.settings import ReaderSettings, load_reader_settings
from core.store.library import Library
from desktop.reader.reading_settings import ReadingSettings
from desktop.reader.text_view import TextView
from desktop.reader.typography import line_lengths, serif_family
from desktop.theme import THEMES
from tests.desktop.conftest import close_window
from tests.desktop.test_layout import make_window, on_screen_lines

BOOK = "alice_in_wonderland.epub"


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = make_window(app, qtbot)
    yield win
    close_window(qtbot, win)


def open_book(window: Any, library: Library, books_dir: Path, name: str = BOOK) -> TextView:
    book = import_book(library, books_dir / name).book
    window.books.refresh_library()
    window.open_book(book.id, 9)
    view = window.reader.view
    assert isinstance(view, TextView)
    return view


def full_lines(view: TextView) -> list[tuple[QTextLayout, int]]:
    """(layout, line index) of every full line (not a paragraph's last) on screen."""
    first, last = view.visible_range()
    doc = view.document()
    out = []
    block = doc.findBlock(first)
    while block.isValid() and block.position() <= last:
        layout = block.layout()
        for i in range(layout.lineCount() - 1):
            out.append((layout, i))
        block = block.next()
    return out


def ink_right_edges(view: TextView) -> list[int]:
    """The rightmost text pixel of each full line on screen, read from the drawn page."""
    image = view.viewport().grab().toImage()
    bar = view.verticalScrollBar().value()
    background = QColor(THEMES["light"].background)
    edges = []
    for layout, i in full_lines(view):
        line = layout.lineAt(i)
        block_top = layout.position().y()
        y = int(block_top + line.y() + line.ascent() * 0.7) - bar
        if not 0 <= y < image.height():
            continue
        row = [image.pixelColor(x, y) for x in range(image.width() - 1, -1, -1)]
        for k, colour in enumerate(row):
            if abs(colour.lightness() - background.lightness()) > 60:
                edges.append(image.width() - 1 - k)
                break
    return edges


def test_default_look_is_a_serif_column(window: Any, library: Library, books_dir: Path) -> None:
    view = open_book(window, library, books_dir)
    family = QFontInfo(view.document().defaultFont()).family()
    assert family == serif_family() and "Serif" in family, family
    assert window.reader.typography == ReaderSettings()
    window.panels.apply_typography(replace(ReaderSettings(), columns=1))
    margin = view.document().rootFrame().frameFormat().leftMargin()
    assert margin > ReaderSettings().margin, "a wide window: the column is centred"


def test_measure_font_spacing_indent_and_place_kept(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    view = open_book(window, library, books_dir)
    top = view.top_page()
    first_words = view.flow.page_text(top)[:40]
    for measure in (45, 80):
        window.panels.apply_typography(replace(ReaderSettings(), measure=measure, columns=1))
        lengths = on_screen_lines(view)
        assert max(lengths) <= measure and statistics.median(lengths) >= 0.8 * measure, (
            measure,
            lengths,
        )
        assert view.top_page() == top and view.flow.page_text(top)[:40] == first_words
    # a narrow window: the column narrows too, with the smallest margin kept
    window.panels.apply_typography(replace(ReaderSettings(), measure=120, margin=40))
    assert view.document().rootFrame().frameFormat().leftMargin() == 40
    assert max(on_screen_lines(view)) < 120
    # line spacing: twice the spacing, (about) twice the distance between lines
    heights = {}
    for spacing in (1.0, 2.0):
        window.panels.apply_typography(replace(ReaderSettings(), line_spacing=spacing))
        layout, i = full_lines(view)[0]
        heights[spacing] = layout.lineAt(i + 1).y() - layout.lineAt(i).y()
    assert heights[2.0] == pytest.approx(2 * heights[1.0], rel=0.1), heights
    # first-line indent and paragraph spacing
    window.panels.apply_typography(replace(ReaderSettings(), paragraph_indent=2.0))
    layout, i = full_lines(view)[0]
    block = view.document().findBlock(view.visible_range()[0]).next()
    assert block.blockFormat().textIndent() > 10
    assert block.layout().lineAt(0).x() > block.layout().lineAt(1).x() + 10
    window.panels.apply_typography(replace(ReaderSettings(), paragraph_spacing=2.0))
    assert block.isValid()
    block = view.document().findBlock(view.visible_range()[0]).next()
    assert block.blockFormat().bottomMargin() > 20
    # a chosen font
    window.panels.apply_typography(
        replace(ReaderSettings(), font_family="DejaVu Sans", font_size=16)
    )
    font = view.document().defaultFont()
    assert QFontInfo(font).family() == "DejaVu Sans" and font.pointSizeF() == 16
    assert view.top_page() == top, "the reader keeps the place through every change"


def test_justified_lines_end_together(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    view = open_book(window, library, books_dir)
    window.panels.apply_typography(replace(ReaderSettings(), justify=False, columns=1))
    ragged = ink_right_edges(view)
    window.panels.apply_typography(replace(ReaderSettings(), justify=True, columns=1))
    justified = ink_right_edges(view)
    assert len(ragged) >= 8 and len(justified) >= 8
    # the ink ends where the line ends, give or take the shape of the last glyph ("." or "e")
    assert max(justified) - min(justified) <= 10, justified
    assert max(ragged) - min(ragged) > 30, ragged


def test_book_styles_kept_or_ignored(window: Any, library: Library, books_dir: Path) -> None:
    view = open_book(window, library, books_dir)

    def italic_one() -> bool:
        cursor = view.document().find("one respectable")
        assert not cursor.isNull()
        cursor.setPosition(cursor.selectionStart() + 1)
        return cursor.charFormat().fontItalic()

    assert italic_one(), "the book's italics"
    window.panels.apply_typography(replace(ReaderSettings(), book_styles=False))
    assert not italic_one(), "ignored when the reader asks"
    window.reader.go_to_page(1)
    doc = view.document()
    heading = next(
        b
        for b in (doc.findBlockByNumber(n) for n in range(doc.blockCount()))
        if b.blockFormat().headingLevel()
    )
    fragment = heading.begin().fragment()
    assert fragment.charFormat().fontWeight() < 600, "headings flattened to the text's weight"
    assert not heading.blockFormat().alignment() & Qt.AlignmentFlag.AlignHCenter
    window.panels.apply_typography(ReaderSettings())
    heading = next(
        b
        for b in (doc.findBlockByNumber(n) for n in range(doc.blockCount()))
        if b.blockFormat().headingLevel()
    )
    # this Gutenberg book sets its headings centred, large and not bold: as the book says
    assert heading.blockFormat().alignment() & Qt.AlignmentFlag.AlignHCenter
    body = heading.next()
    assert heading.layout().lineAt(0).height() > body.layout().lineAt(0).height() * 1.4


def test_reading_settings_window_applies_live_and_remembers(
    window: Any, app: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    view = open_book(window, library, books_dir)
    other = import_book(library, books_dir / "metamorphosis.epub").book
    alice = window.reader.book
    window.action_reading.trigger()
    dialog = window.panels.reading_settings
    assert isinstance(dialog, ReadingSettings) and dialog.isVisible()
    dialog.measure.setValue(50)
    lines = on_screen_lines(view)
    # the measure is an average: a line of narrow letters and quotes may hold a few more
    assert window.reader.typography.measure == 50 and statistics.median(lines) <= 50
    assert max(lines) <= 53
    dialog.justify.setChecked(True)
    saved = tomllib.loads(app.paths.settings_file.read_text())["reader"]
    assert saved["measure"] == 50 and saved["justify"] is True
    # this book only: the global look stays, the other book keeps it
    dialog.this_book.setChecked(True)
    dialog.size_box.setValue(18)
    assert view.document().defaultFont().pointSizeF() == 18
    assert load_reader_settings(app.paths)[0].font_size == ReaderSettings().font_size
    window.open_book(other.id, 2)
    assert (
        window.reader.typography.font_size == ReaderSettings().font_size
        and window.reader.typography.measure == 50
    )
    assert not dialog.this_book.isChecked(), "the dialog follows the open book"
    window.open_book(alice.id, 9)
    assert window.reader.typography.font_size == 18 and dialog.this_book.isChecked()
    # zooming the text (Ctrl++) is remembered the same way
    window.action_zoom_in.trigger()
    assert window.typography.for_book(alice.id).font_size == 19
    assert load_reader_settings(app.paths)[0].font_size == ReaderSettings().font_size
    dialog.this_book.setChecked(False)  # back to the look of every book
    assert not window.typography.has_override(alice.id)
    dialog.reset()
    assert load_reader_settings(app.paths)[0] == ReaderSettings()


def test_bad_value_in_settings_file_falls_back_with_a_message(
    app: Any, library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    app.paths.settings_file.write_text("[reader]\nline_spacing = 9\nmeasure = 50\n")
    window = make_window(app, qtbot)
    try:
        assert window.reader.typography.line_spacing == ReaderSettings().line_spacing
        assert window.reader.typography.measure == 50, "the good key still applies"
        assert "'reader.line_spacing'" in window.statusBar().currentMessage()
        view = open_book(window, library, books_dir)
        assert statistics.median(on_screen_lines(view)) <= 50 and max(on_screen_lines(view)) <= 53
        window.panels.open_reading_settings()
        note = window.panels.reading_settings.note
        assert note.isVisible()
        assert "'reader.line_spacing'" in note.text() and "from 1.0 to 3.0" in note.text()
    finally:
        close_window(qtbot, window)


def test_line_lengths_counts_full_lines_only(qapp: Any) -> None:
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setTextWidth(200)
    doc.setPlainText("short\n" + "word " * 60)
    doc.size()  # laid out
    lengths = line_lengths(doc)
    assert lengths and all(0 < n <= 40 for n in lengths)
    assert "short" not in doc.firstBlock().text()[5:] and len(lengths) >= 3


def test_size_zoomed_before_reader_settings_is_kept_once(
    app: Any, qtbot: Any, real_font: str
) -> None:
    from PySide6.QtCore import QSettings

    ini = QSettings(str(app.paths.config / "reader.ini"), QSettings.Format.IniFormat)
    ini.setValue("font_size", 17)  # what an older Margin remembered
    ini.sync()
    window = make_window(app, qtbot)
    try:
        assert window.reader.typography.font_size == 17
    finally:
        close_window(qtbot, window)
    assert load_reader_settings(app.paths)[0].font_size == 17, "now in settings.toml"
    ini.setValue("font_size", 21)  # later zooms (of a book with its own look) are not global
    ini.sync()
    window = make_window(app, qtbot)
    try:
        assert window.reader.typography.font_size == 17
    finally:
        close_window(qtbot, window)


def test_a_zoom_is_kept_in_settings_toml_alone(
    app: Any, library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    """One home for the font size: zooming writes settings.toml (which the window reads back
    after a restart) and nothing in reader.ini."""
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QKeySequence
    from PySide6.QtTest import QTest

    window = make_window(app, qtbot)
    try:
        view = open_book(window, library, books_dir)
        start = window.reader.typography.font_size
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        view.setFocus()
        for _ in range(2):  # Ctrl++ (the shortcut's own key sequence, as the menu shows it)
            QTest.keySequence(window, QKeySequence(QKeySequence.StandardKey.ZoomIn))
        qtbot.waitUntil(lambda: window.reader.typography.font_size == start + 2)
    finally:
        close_window(qtbot, window)
    assert load_reader_settings(app.paths)[0].font_size == start + 2
    ini = QSettings(str(app.paths.config / "reader.ini"), QSettings.Format.IniFormat)
    assert ini.value("font_size") is None
    window = make_window(app, qtbot)
    try:
        assert window.reader.typography.font_size == start + 2
        assert window.reader.font_size == start + 2
    finally:
        close_window(qtbot, window)


def test_reading_settings_are_reached_and_changed_by_keyboard(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    """Ctrl+Shift+A gives the reading settings the keyboard; the arrow keys change a setting;
    Esc closes them."""
    open_book(window, library, books_dir)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dialog = window.panels.reading_settings
    assert isinstance(dialog, ReadingSettings)
    qtbot.waitUntil(dialog.isActiveWindow)
    focused = QApplication.focusWidget()
    assert focused is dialog.layout_box, focused
    before = window.reader.typography.layout
    qtbot.keyClick(focused, Qt.Key.Key_Down)
    assert window.reader.typography.layout != before
    qtbot.keyClick(focused, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is dialog.columns
    qtbot.keyClick(dialog.columns, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
