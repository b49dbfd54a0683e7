"""The reader window with real widgets under the offscreen platform and real books: opening
and turning, PDFs, selections, highlights, Find, the saved position, menus and shortcuts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF, Qt

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.pdf_view import PdfView
from desktop.reader.text_view import TextView
from desktop.requests import AskRequest
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import run_until


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
    window.books.refresh_library()
    window.open_book(book.id, 2)
    view = window.reader.view
    assert isinstance(view, TextView)
    assert window.reader.page_box.value() == 2
    page_two = library.page(book.id, 2).text
    assert page_two.split("\n\n")[0][:40] in " ".join(view.flow.document_text().split())
    window.action_next.trigger()
    assert window.reader.page == 3
    assert library.page(book.id, 3).text.split()[0] in view.flow.document_text()
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
    assert "Hello" in window.reader.view.flow.document_text()


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
    assert view.marks.select_text(word)
    assert window.reader.selection_bar.isVisible()
    with qtbot.waitSignal(window.requestAsk, timeout=2000) as blocker:
        window.reader.selection_bar.buttons["ask"].click()
    request = blocker.args[0]
    assert (request.page, request.text, request.action, request.prompt) == (5, word, "ask", "")


def test_highlight_saved_listed_redrawn_and_exported(
    window: Any, library: Library, books_dir: Path, tmp_path: Path
) -> None:
    from core.export.markdown import export_highlights

    book = import_book(library, books_dir / "metamorphosis.epub").book
    window.open_book(book.id, 4)
    phrase = " ".join(library.page(book.id, 4).text.split()[5:10])
    assert window.reader.view.marks.select_text(phrase)
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
    book = library.set_read_to(book.id, book.page_count)  # read to the end: nothing folded
    window.open_book(book.id, 1)
    window.reader.find_box.setText("Cheshire")
    window.reader.run_find()
    results = window.reader.find_results
    assert results.count() > 0
    item = results.item(0)
    window.reader._result_go(item)
    page, _mark = item.data(Qt.ItemDataRole.UserRole + 2)
    assert window.reader.page == page
    assert window.reader.view.marks.marked()


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


def test_context_menu_lists_the_actions(window: Any, library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    window.open_book(book.id, 2)
    menu = window.reader.build_context_menu()
    assert not menu.actions()[0].isEnabled(), "nothing selected yet"
    window.reader.view.marks.select_text(library.page(book.id, 2).text.split()[0])
    menu = window.reader.build_context_menu()
    labels = [a.text() for a in menu.actions() if a.text()]
    assert (
        labels[:5] == ["Ask…", "Explain", "Define", "Summarize", "Translate"]
        and "Highlight" in labels
    )
    assert all(a.isEnabled() for a in menu.actions() if a.text())


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
