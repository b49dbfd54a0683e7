"""The window gives the book the window: library and reading views, the side panel, the chat
beside the book, focus mode and full screen, all remembered; screenshots at three window sizes
in three themes, with the reading pane's share and the characters per line measured from the
document's layout."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.text_view import TextView
from desktop.reader.typography import line_lengths
from desktop.window.main_window import MainWindow, default_chat_width
from tests.desktop.conftest import close_window
from tests.support.shots import keep_shot, save_shot

ROOT = Path(__file__).resolve().parents[2]
BOOK = "alice_in_wonderland.epub"


def make_window(app: Any, qtbot: Any, size: tuple[int, int] = (1280, 800), **kw: Any) -> Any:
    win = MainWindow(app, **({"restore": False} | kw))
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = make_window(app, qtbot)
    yield win
    close_window(qtbot, win)


def open_alice(window: Any, library: Library, books_dir: Path, page: int = 5) -> TextView:
    book = import_book(library, books_dir / BOOK).book
    window.books.refresh_library()
    window.open_book(book.id, page)
    view = window.reader.view
    assert isinstance(view, TextView)
    return view


def on_screen_lines(view: TextView) -> list[int]:
    first, last = view.visible_range()
    return line_lengths(view.document(), first, last)


def test_library_view_and_reading_view(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    assert window.panes.library_shown(), "no book open: the library shows"
    assert not window.back_to_book.isVisible()
    view = open_alice(window, library, books_dir)
    assert not window.panes.library_shown() and view.isVisible()
    assert not window.library_panel.isVisible(), "the reader has the window to itself"
    window.action_toggle_library.trigger()  # Ctrl+B
    assert window.panes.library_shown() and window.library_panel.isVisible()
    assert window.back_to_book.isVisible() and "Alice" in window.back_to_book.text()
    window.back_to_book.click()
    assert not window.panes.library_shown() and view.isVisible()
    window.library_button.click()
    assert window.panes.library_shown()
    window.action_toggle_library.trigger()
    assert not window.panes.library_shown()
    # removing the open book goes back to the library
    assert window.reader.book is not None
    window.books.remove_book(window.reader.book.id)
    assert window.panes.library_shown() and not window.back_to_book.isVisible()


def test_side_panel_chat_and_shortcuts(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, library, books_dir)
    keys = {
        name: getattr(window, f"action_{name}").shortcut().toString()
        for name in ("toggle_library", "toggle_side", "toggle_chat", "focus_chat")
    } | {
        "full_screen": window.action_full_screen.shortcut().toString(),
        "focus_mode": window.action_focus_mode.shortcut().toString(),
        "leave": window.action_leave_focus.shortcut().toString(),
    }
    assert keys == {
        "toggle_library": "Ctrl+B",
        "toggle_side": "Ctrl+T",
        "toggle_chat": "Ctrl+Shift+L",
        "focus_chat": "Ctrl+L",
        "full_screen": "F11",
        "focus_mode": "Ctrl+Shift+F",
        "leave": "Esc",
    }
    side = window.reader.side
    assert not side.isVisible(), "the side panel is out of the way at first"
    window.action_toggle_side.trigger()
    assert side.isVisible() and window.side_button.isChecked()
    window.action_toggle_side.trigger()
    assert not side.isVisible() and not window.side_button.isChecked()
    window.action_find.trigger()  # Find needs the panel: it shows, on its Find tab
    assert side.isVisible() and side.currentIndex() == 1
    assert window.reader.find_box.hasFocus() or QApplicationFocus(window.reader.find_box)
    # the chat: hidden and shown again at the width it had
    assert window.panes.chat_visible()
    window.splitter.setSizes([900, 380])
    width = window.splitter.sizes()[1]
    window.action_toggle_chat.trigger()
    assert not window.chat.isVisible() and not window.panes.chat_visible()
    qtbot.waitUntil(lambda: window.reader.width() >= window.width() - 4, timeout=3000)
    window.action_focus_chat.trigger()  # Ctrl+L shows it again
    assert window.chat.isVisible() and window.chat_button.isChecked()
    assert abs(window.splitter.sizes()[1] - width) <= 2
    assert window.splitter.isCollapsible(1) and not window.splitter.isCollapsible(0)


def QApplicationFocus(widget: Any) -> bool:
    from PySide6.QtWidgets import QApplication

    return QApplication.focusWidget() is widget


def test_focus_mode_and_full_screen(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    view = open_alice(window, library, books_dir)
    window.panes.set_side_visible(True)
    qtbot.waitUntil(lambda: window.reader.side.width() > 50, timeout=3000)
    page_width = view.width()
    window.action_focus_mode.trigger()
    assert window.panes.focus_mode()
    hidden = (
        window.menuBar(),
        window.statusBar(),
        window.reader.toolbar,
        window.reader.footer,
        window.reader.side,
        window.chat,
    )
    assert not any(w.isVisible() for w in hidden)
    assert view.isVisible()
    qtbot.waitUntil(lambda: view.width() >= window.width() - 4 > page_width, timeout=3000)
    assert window.action_leave_focus.isEnabled()
    # the menu's keys still work with the menu bar hidden
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    view.setFocus()
    top = view.top_page()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not window.panes.focus_mode(), "Esc leaves focus mode"
    assert all(w.isVisible() for w in hidden), "everything comes back as it was"
    assert view.top_page() == top, "the reader keeps the place"
    assert not window.action_leave_focus.isEnabled(), "Esc belongs to the widgets again"
    qtbot.keyClick(
        view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert window.panes.focus_mode(), "Ctrl+Shift+F from the keyboard"
    window.action_focus_mode.trigger()
    assert not window.panes.focus_mode()
    window.action_full_screen.trigger()
    qtbot.waitUntil(window.isFullScreen, timeout=3000)
    window.action_full_screen.trigger()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=3000)


def test_layout_is_remembered(
    app: Any, library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    first = make_window(app, qtbot)
    book = import_book(library, books_dir / BOOK).book
    first.open_book(book.id, 3)
    first.panes.set_side_visible(True)
    qtbot.waitUntil(lambda: first.reader.side.width() > 50, timeout=3000)
    first.reader.split.setSizes([300, 600])
    side_width = first.reader.split.sizes()[0]
    first.splitter.setSizes([960, 320])
    chat_width = first.splitter.sizes()[1]  # as the splitter allowed it
    assert chat_width < 384, "not the default width"
    first.panes.set_chat_visible(False)
    first.panes.set_focus_mode(True)
    close_window(qtbot, first)
    second = make_window(app, qtbot, restore=True)
    try:
        assert second.reader.book is not None and second.reader.book.id == book.id
        assert not second.panes.library_shown()
        assert second.panes.focus_mode(), "focus mode is remembered"
        second.panes.set_focus_mode(False)
        assert second.reader.side.isVisible(), "the side panel as it was before focus mode"
        qtbot.waitUntil(lambda: abs(second.reader.side.width() - side_width) <= 4, timeout=3000)
        assert not second.chat.isVisible(), "the chat stays hidden"
        second.panes.set_chat_visible(True)
        # the remembered width, or less when the reader (now with its side panel) needs room
        assert 200 < second.splitter.sizes()[1] <= chat_width + 10, second.splitter.sizes()
        second.panes.show_library()
    finally:
        close_window(qtbot, second)
    third = make_window(app, qtbot, restore=True)
    try:
        assert third.panes.library_shown(), "the library view is remembered too"
        assert third.reader.book is not None, "with the book ready behind it"
    finally:
        close_window(qtbot, third)


SIZES = [(1024, 700), (1280, 800), (1920, 1080)]


@pytest.mark.parametrize("theme", ["light", "sepia", "dark"])
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_screenshot_book_has_the_window(
    app: Any,
    library: Library,
    books_dir: Path,
    qtbot: Any,
    real_font: str,
    size: tuple[int, int],
    theme: str,
) -> None:
    from desktop.theme import THEMES, clear_app_theme

    window = make_window(app, qtbot, size)
    try:
        window.set_theme(theme)
        view = open_alice(window, library, books_dir, page=9)
        qtbot.wait(50)
        assert window.panes.chat_visible()
        default = default_chat_width(size[0])
        qtbot.waitUntil(lambda: abs(window.splitter.sizes()[1] - default) <= 2, timeout=3000)
        chat = window.splitter.sizes()[1]
        pane = view.width()
        assert pane >= size[0] / 2, f"the page pane is {pane} px of {size[0]}"
        measure = window.reader.typography.measure
        lengths = on_screen_lines(view)
        assert len(lengths) >= 8, "a screenful of full lines"
        # two columns (from 860 px of book) take lines half as long again (the reader's view)
        assert max(lengths) <= view.pager.line_measure(), (max(lengths), view.pager.line_measure())
        if view.pager.column_count() == 1:
            assert statistics.median(lengths) >= 0.8 * measure, lengths
        # the column is centred: equal margins either side
        fmt = view.document().rootFrame().frameFormat()
        assert fmt.leftMargin() == fmt.rightMargin() >= window.reader.typography.margin
        image = window.grab().toImage()
        name = f"layout-{size[0]}x{size[1]}-{theme}.png"
        kept = save_shot(image, name)
        # the page is in the theme's colours: its background beside the column
        x = view.mapTo(window, view.rect().topLeft()).x() + int(fmt.leftMargin()) // 2
        y = view.mapTo(window, view.rect().center()).y()
        assert image.pixelColor(x, y).name() == THEMES[theme].background
        record = {"size": size, "theme": theme, "pane": pane, "chat": chat, "lines": lengths}
        if kept is not None:
            kept.with_name(f"{name}.json").write_text(json.dumps(record))
    finally:
        close_window(qtbot, window)
        from PySide6.QtWidgets import QApplication

        clear_app_theme(QApplication.instance())  # type: ignore[arg-type]


# High-DPI: the same window drawn at 150 % and 200 % in a child process ----------------------


def _shot(out: Path, book: Path) -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from core.app import Margin
    from core.paths import resolve_paths

    qapp = QApplication.instance() or QApplication([])
    margin = Margin.open(resolve_paths().ensure())
    imported = import_book(margin.library, book).book
    window = MainWindow(margin, restore=False)
    window.resize(1280, 800)
    window.show()
    window.open_book(imported.id, 9)
    for _ in range(20):
        qapp.processEvents()
    view = window.reader.view
    assert isinstance(view, TextView)
    pixmap = window.grab()
    pixmap.save(str(out))
    result = {
        "ratio": pixmap.devicePixelRatio(),
        "pixels": [pixmap.width(), pixmap.height()],
        "logical": [window.width(), window.height()],
        "lines": on_screen_lines(view),
        "font_pixels": view.document().defaultFont().pointSizeF(),
    }
    window.close()
    margin.close()
    return result


@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_high_dpi_text_is_drawn_at_full_resolution(
    books_dir: Path, tmp_path: Path, scale: str
) -> None:
    png = tmp_path / f"layout-scale-{scale}.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": scale}
    env["MARGIN_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "tests.desktop.test_layout", str(png), str(books_dir / BOOK)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    keep_shot(png)
    ratio = float(scale)
    assert result["ratio"] == pytest.approx(ratio), "drawn for the screen's pixel ratio"
    w, h = result["logical"]
    assert result["pixels"] == [round(w * ratio), round(h * ratio)], "not scaled up afterwards"
    # the same layout in logical units: the measure holds at every scale
    assert result["lines"] and max(result["lines"]) <= 66


if __name__ == "__main__":
    print(json.dumps(_shot(Path(sys.argv[1]), Path(sys.argv[2]))))


def test_notes_live_in_the_side_panel(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    view = open_alice(window, library, books_dir)
    assert view.marks.select_text("Alice")
    assert window.reader.ask_about_selection("highlight")
    window.action_notes.trigger()  # Ctrl+Shift+N
    side = window.reader.side
    assert side.isVisible() and side.tabText(side.currentIndex()) == "Notes"
    panel = window.panels.notes_panel
    assert not panel.isWindow() and panel.isVisible()
    qtbot.waitUntil(  # read on a worker thread
        lambda: any("Alice" in panel.items.item(i).text() for i in range(panel.items.count())),
        timeout=5000,
    )
    window.action_notes.trigger()  # once: the same tab again, not a second one
    assert [side.tabText(i) for i in range(side.count())].count("Notes") == 1
