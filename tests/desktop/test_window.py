"""The reader window with real widgets under the offscreen platform and real books."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from desktop.main_window import MainWindow
from desktop.reader.pdf_view import PdfView
from desktop.reader.text_view import TextView
from desktop.requests import AskRequest
from tests.desktop.conftest import close_window

ROOT = Path(__file__).resolve().parents[2]


def run_until(qtbot: Any, coro: Any, timeout: float = 20.0) -> Any:
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
    return task.result()


def test_real_font_is_installed(real_font: str) -> None:
    assert real_font


def test_empty_library_says_what_to_do(window: Any) -> None:
    assert window.library_panel.empty.isVisible()
    assert "drag a file here" in window.library_panel.empty.text()
    assert window.action_open.shortcut().toString() == "Ctrl+O"


@pytest.mark.parametrize("name", ["alice_in_wonderland.epub", "alice_in_wonderland.txt"])
def test_open_reflowable_book_and_turn_pages(
    window: Any, library: Library, books_dir: Path, name: str
) -> None:
    book = import_book(library, books_dir / name).book
    window.refresh_library()
    window.open_book(book.id, 2)
    view = window.reader.view
    assert isinstance(view, TextView)
    assert window.reader.page_box.value() == 2
    page_two = library.page(book.id, 2).text
    assert page_two.split("\n\n")[0][:40] in " ".join(view.document_text().split())
    window.action_next.trigger()
    assert window.reader.page == 3
    assert library.page(book.id, 3).text.split()[0] in view.document_text()
    window.action_previous.trigger()
    assert window.reader.page == 2
    window.reader.go_to_page(10_000)
    assert window.reader.page == book.page_count


def test_markdown_and_html_books(window: Any, library: Library, tmp_path: Path) -> None:
    md = tmp_path / "notes.md"
    md.write_text("# Title\n\nSome *emphasis* here.\n\n## Part\n\nMore text.", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>H</title></head><body><h1>H</h1><p>Hello <img src='http://127.0.0.1:9/x.png'> world</p></body></html>"
    )
    for path in (md, page):
        book = import_book(library, path).book
        window.open_book(book.id)
        assert isinstance(window.reader.view, TextView)
    assert "Hello" in window.reader.view.document_text()


def test_pdf_opens_renders_and_navigates(
    window: Any, library: Library, pdf_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, pdf_dir / "pdflatex-outline.pdf").book
    window.open_book(book.id, 3)
    view = window.reader.view
    assert isinstance(view, PdfView)
    run_until(qtbot, window.reader.wait_drawn(5.0))
    assert view.is_drawn() and view.current == 3
    assert window.reader.toc.topLevelItemCount() == 9
    window.reader.go_to_page(1)
    assert view.current == 1
    scale = view.scale
    window.action_zoom_in.trigger()
    assert view.scale > scale
    image = window.grab().toImage()
    assert image.width() > 0


def test_pdf_mouse_selection_emits_ask_with_page(
    window: Any, library: Library, pdf_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    window.open_book(book.id, 1)
    view = window.reader.view
    run_until(qtbot, window.reader.wait_drawn(5.0))
    rect = view.rects[0]
    canvas = view.canvas
    start = QPointF(rect.left() + rect.width() * 0.15, rect.top() + rect.height() * 0.12)
    end = QPointF(rect.left() + rect.width() * 0.85, rect.top() + rect.height() * 0.16)
    view.ensureVisible(int(start.x()), int(start.y()))
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start.toPoint())
    qtbot.mouseMove(canvas, end.toPoint())
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end.toPoint())
    selection = window.reader.selection()
    assert selection is not None and selection[0] == 1 and len(selection[1]) > 10
    with qtbot.waitSignal(window.requestAsk, timeout=2000) as blocker:
        assert window.reader.ask_about_selection("explain")
    request = blocker.args[0]
    assert isinstance(request, AskRequest)
    assert (request.book_id, request.page, request.action) == (book.id, 1, "explain")
    assert request.text == selection[1]
    assert request.text in request.prompt


def test_text_selection_bar_and_signal(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    window.open_book(book.id, 5)
    view = window.reader.view
    word = " ".join(library.page(book.id, 5).text.split()[3:7])
    assert view.select_text(word)
    assert window.reader.selection_bar.isVisible()
    with qtbot.waitSignal(window.requestAsk, timeout=2000) as blocker:
        window.reader.selection_bar.buttons["ask"].click()
    request = blocker.args[0]
    assert (request.page, request.text, request.action, request.prompt) == (5, word, "ask", "")


def test_highlight_saved_listed_redrawn_and_exported(
    window: Any, library: Library, books_dir: Path, tmp_path: Path
) -> None:
    from core.export import export_highlights

    book = import_book(library, books_dir / "metamorphosis.epub").book
    window.open_book(book.id, 4)
    phrase = " ".join(library.page(book.id, 4).text.split()[5:10])
    assert window.reader.view.select_text(phrase)
    window.reader.save_highlight(4, phrase, None, "green", "my note")
    assert library.list_highlights(book.id)[0].text == phrase
    assert window.reader.highlight_list.count() == 1
    window.reader.go_to_page(5)
    window.reader.go_to_page(4)
    colours = [
        sel.format.background().color().green() for sel in window.reader.view.extraSelections()
    ]
    assert colours, "the highlight is drawn again when the page is shown"
    out = export_highlights(library, book.id, tmp_path / "h.md")
    assert phrase in out.read_text() and "my note" in out.read_text()


def test_find_in_book_goes_to_page_and_marks(
    window: Any, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    window.open_book(book.id, 1)
    window.reader.find_box.setText("Cheshire")
    window.reader.run_find()
    results = window.reader.find_results
    assert results.count() > 0
    item = results.item(0)
    window.reader._result_go(item)
    page, _mark = item.data(Qt.ItemDataRole.UserRole + 2)
    assert window.reader.page == page
    assert window.reader.view.marked()


def test_position_saved_and_restored(
    app: Any, library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.txt").book
    first = MainWindow(app)
    qtbot.addWidget(first)
    library.set_position(book.id, 7)
    first.open_book(book.id, 7)
    first.reader.next_page()  # reading on from 7 (where reading stopped) to 8 raises it
    first.reader.go_to_page(40)  # a jump (Go to page) moves the page only
    first.reader.next_page()  # and a page turn there is looking ahead, not reading
    first.reader.save_position()
    assert (library.get_book(book.id).page, library.get_book(book.id).read_to) == (41, 8)
    first.reader.go_to_page(8)
    first.close()
    assert library.get_book(book.id).page == 8
    second = MainWindow(app)
    qtbot.addWidget(second)
    assert second.reader.book is not None and second.reader.book.id == book.id
    assert second.reader.page == 8
    second.close()


def test_finished_toggle_lifts_the_bound(window: Any, library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    window.open_book(book.id, 3)
    window.reader.finished_box.setChecked(True)
    assert library.get_book(book.id).spoiler_bound is None


def test_import_with_progress_cancel_and_errors(
    window: Any, library: Library, books_dir: Path, pdf_dir: Path, qtbot: Any, tmp_path: Path
) -> None:
    from tests.support.pdfgen import book_pages, make_text_pdf

    seen: list[float] = []
    window.importer.progressed.connect(lambda f, m: seen.append(f))
    window.import_files([books_dir / "metamorphosis.epub"])
    qtbot.waitUntil(lambda: library.list_books() != [] and not window.importer.busy, timeout=20000)
    assert seen and seen[-1] == pytest.approx(1.0)
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=5000)
    # a bad file shows its reason inline
    window.import_files(
        [books_dir / "test_corrupted.epub", pdf_dir / "libreoffice-writer-password.pdf"]
    )
    from tests.desktop.reader.test_pdf_scanned import _dialog

    QTest.keyClick(_dialog(qtbot), Qt.Key.Key_Escape)  # the protected PDF asks its password
    qtbot.waitUntil(lambda: window.library_panel.error.isVisible(), timeout=20000)
    text = window.library_panel.error.text()
    assert "test_corrupted.epub is damaged" in text and "protected by a password" in text
    # cancel a long import
    big = make_text_pdf(
        tmp_path / "big.pdf", book_pages(400, books_dir / "alice_in_wonderland.txt")
    )
    window.importer.started.connect(lambda _name: window.importer.cancel())
    window.import_files([big])
    qtbot.waitUntil(
        lambda: (
            not window.importer.busy
            and "Stopped adding big.pdf" in window.library_panel.error.text()
        ),
        timeout=20000,
    )
    assert [b.title for b in library.list_books()] == ["Metamorphosis"]


def test_remote_resources_are_never_fetched(window: Any, library: Library, tmp_path: Path) -> None:
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    from tests.core.books.epubgen import make_epub

    body = (
        f'<p>Text <img src="{url}/img.png"/></p><link rel="stylesheet" href="{url}/s.css"/>'
        f'<iframe src="{url}/frame"></iframe><script src="{url}/x.js">fetch("{url}/script")</script>'
        f'<p style="background:url({url}/bg.png)">styled</p>'
    )
    path = make_epub(
        tmp_path / "hostile.epub",
        [("Hostile", body)],
        extra_files={"OEBPS/font.css": f"@font-face {{ src: url({url}/f.woff) }}"},
    )
    book = import_book(library, path).book
    window.open_book(book.id, 1)
    QApplication.processEvents()
    html = library.page(book.id, 1).html or ""
    window.reader.view.setHtml(
        html + f'<img src="{url}/direct.png">'
    )  # even markup injected directly
    QApplication.processEvents()
    server.shutdown()
    assert hits == []
    assert TextView.blockedRequests >= 1


def test_screenshot_command_in_a_subprocess(tmp_path: Path, pdf_dir: Path) -> None:
    png = tmp_path / "shot.png"
    cmd = [
        sys.executable,
        "-m",
        "desktop",
        "--data-dir",
        str(tmp_path / "data"),
        "--open",
        str(pdf_dir / "pdflatex-4-pages.pdf"),
        "--page",
        "2",
        "--screenshot",
        str(png),
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env=_env({"QT_QPA_PLATFORM": "offscreen"}),
    )
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert image.width() >= 800 and image.height() >= 500


def test_bad_file_on_the_command_line_exits_1(tmp_path: Path, books_dir: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "desktop",
        "--data-dir",
        str(tmp_path / "d"),
        "--open",
        str(books_dir / "test_empty.epub"),
        "--screenshot",
        str(tmp_path / "x.png"),
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env=_env({"QT_QPA_PLATFORM": "offscreen"}),
    )
    assert done.returncode == 1
    assert "test_empty.epub is empty" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="Xvfb is not installed")
def test_screenshot_under_xvfb(tmp_path: Path, books_dir: Path) -> None:
    png = tmp_path / "x.png"
    cmd = [
        "xvfb-run",
        "-a",
        sys.executable,
        "-m",
        "desktop",
        "--data-dir",
        str(tmp_path / "data"),
        "--open",
        str(books_dir / "metamorphosis.epub"),
        "--screenshot",
        str(png),
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=_env({"QT_QPA_PLATFORM": "xcb"}),
    )
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "MARGIN_HOME"}
    env.update(extra)
    return env


def test_context_menu_lists_the_actions(window: Any, library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    window.open_book(book.id, 2)
    menu = window.reader.build_context_menu()
    assert not menu.actions()[0].isEnabled(), "nothing selected yet"
    window.reader.view.select_text(library.page(book.id, 2).text.split()[0])
    menu = window.reader.build_context_menu()
    labels = [a.text() for a in menu.actions() if a.text()]
    assert (
        labels[:5] == ["Ask…", "Explain", "Define", "Summarize", "Translate"]
        and "Highlight" in labels
    )
    assert all(a.isEnabled() for a in menu.actions() if a.text())


def test_main_window_data_paths_are_isolated(margin_home: Path) -> None:
    assert resolve_paths().data == margin_home


def test_first_run_imports_the_welcome_guide(
    app: Any, library: Library, qtbot: Any, real_font: str
) -> None:
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.start_background_work()
    qtbot.waitUntil(lambda: win.reader.book is not None, timeout=20000)
    assert win.reader.book.title == "Welcome to Margin"
    assert any(t.title == "Asking about a passage" for t in library.toc(win.reader.book.id))
    win.close()
    again = MainWindow(app, restore=False)
    qtbot.addWidget(again)
    library.delete_book(library.list_books()[0].id)
    again.start_background_work()
    qtbot.wait(300)
    assert library.list_books() == [], "the guide is imported once, not after the reader removed it"
    again.close()


def test_remove_book_asks_then_removes(
    window: Any, library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch, qtbot: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    book = import_book(library, books_dir / "metamorphosis.txt").book
    window.refresh_library()
    window.open_book(book.id)
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.No)
    )
    window.remove_book(book.id)
    assert library.list_books() != []
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes)
    )
    window.remove_book(book.id)
    assert library.list_books() == [] and window.reader.book is None
    with qtbot.waitSignal(window.libraryListed, timeout=5000):  # listed on a worker thread
        pass
    assert window.library_panel.empty.isVisible()


def test_shortcuts_and_accessible_names(window: Any) -> None:
    shortcuts = {
        name: getattr(window, f"action_{name}").shortcut().toString()
        for name in (
            "open",
            "find",
            "goto",
            "zoom_in",
            "focus_chat",
            "ask",
            "settings",
            "toggle_library",
        )
    }
    assert (
        shortcuts["open"] == "Ctrl+O"
        and shortcuts["find"] == "Ctrl+F"
        and shortcuts["goto"] == "Ctrl+G"
    )
    assert (
        shortcuts["focus_chat"] == "Ctrl+L"
        and shortcuts["ask"] == "Ctrl+Return"
        and shortcuts["settings"] == "Ctrl+,"
    )
    from PySide6.QtWidgets import QAbstractButton, QLineEdit

    unnamed = [
        w
        for w in window.findChildren(QAbstractButton) + window.findChildren(QLineEdit)
        if w.isVisible() and not w.accessibleName() and not w.text()
    ]
    assert unnamed == []


def test_a_lost_library_offers_to_add_its_book_copies_back(
    books_dir: Path, qtbot: Any, real_font: str, margin_home: Path
) -> None:
    """The database is gone but the copies are there: the window says so and, with the
    reader's yes, imports them again (nothing is deleted)."""
    from core.app import Margin
    from core.paths import resolve_paths

    first = Margin.open(resolve_paths().ensure())
    import_book(first.library, books_dir / "metamorphosis.txt")
    paths = first.paths
    first.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    app = Margin.open(paths)
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    try:
        win.start_background_work()
        qtbot.waitUntil(lambda: bool(app.library.list_books()), timeout=20000)
        assert [b.title for b in app.library.list_books()] == ["Metamorphosis"]
        qtbot.waitUntil(
            lambda: "Added back 1 of 1" in win.statusBar().currentMessage(), timeout=5000
        )
    finally:
        close_window(qtbot, win)
        app.close()
