"""The window's library: adding books (progress, cancel, errors shown inline), never fetching
a book's remote resources, the welcome guide on first run, removing a book, and a lost
library's copies added back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from desktop.reader.text_flow import PageFlow
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window


def test_main_window_data_paths_are_isolated(margin_home: Path) -> None:
    assert resolve_paths().data == margin_home


def test_import_with_progress_cancel_and_errors(
    window: Any, library: Library, books_dir: Path, pdf_dir: Path, qtbot: Any, tmp_path: Path
) -> None:
    from tests.support.pdfgen import book_pages, make_text_pdf

    seen: list[float] = []
    window.importer.progressed.connect(lambda f, m: seen.append(f))
    window.books.import_files([books_dir / "metamorphosis.epub"])
    qtbot.waitUntil(lambda: library.list_books() != [] and not window.importer.busy, timeout=20000)
    assert seen and seen[-1] == pytest.approx(1.0)
    qtbot.waitUntil(lambda: window.reader.book is not None, timeout=5000)
    # a bad file shows its reason inline
    window.books.import_files(
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
    window.books.import_files([big])
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
    assert PageFlow.blockedRequests >= 1


def test_first_run_imports_the_welcome_guide(
    app: Any, library: Library, qtbot: Any, real_font: str
) -> None:
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.books.start_background_work()
    qtbot.waitUntil(lambda: win.reader.book is not None, timeout=20000)
    assert win.reader.book.title == "Welcome to Margin"
    assert any(t.title == "Asking about a passage" for t in library.toc(win.reader.book.id))
    win.close()
    again = MainWindow(app, restore=False)
    qtbot.addWidget(again)
    library.delete_book(library.list_books()[0].id)
    again.books.start_background_work()
    qtbot.wait(300)
    assert library.list_books() == [], "the guide is imported once, not after the reader removed it"
    again.close()


def test_remove_book_asks_then_removes(
    window: Any, library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch, qtbot: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    book = import_book(library, books_dir / "metamorphosis.txt").book
    window.books.refresh_library()
    window.open_book(book.id)
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.No)
    )
    window.books.remove_book(book.id)
    assert library.list_books() != []
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes)
    )
    import threading

    deleting_on: list[threading.Thread] = []
    delete = library.delete_book

    def delete_and_note(book_id: int) -> None:
        deleting_on.append(threading.current_thread())
        delete(book_id)

    monkeypatch.setattr(library, "delete_book", delete_and_note)
    window.books.remove_book(book.id)
    assert window.reader.book is None  # the book closes at once
    qtbot.waitUntil(lambda: library.list_books() == [], timeout=10000)
    # taking a book out of the search index can take seconds: never on the UI thread
    assert deleting_on and deleting_on[0] is not threading.main_thread()
    qtbot.waitUntil(lambda: window.library_panel.empty.isVisible(), timeout=5000)
    assert "was removed" in window.statusBar().currentMessage()


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
        win.books.start_background_work()
        qtbot.waitUntil(lambda: bool(app.library.list_books()), timeout=20000)
        assert [b.title for b in app.library.list_books()] == ["Metamorphosis"]
        qtbot.waitUntil(
            lambda: "Added back 1 of 1" in win.statusBar().currentMessage(), timeout=5000
        )
    finally:
        close_window(qtbot, win)
        app.close()


def test_a_new_book_opens_before_its_spoiler_counts_then_they_follow(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    """The spoiler check's statistics (seconds of CPU for a big book) are counted after the
    book has opened, on a worker thread, and stored for its first question."""

    def stored() -> bool:
        row = library.db.execute_sql("SELECT count(*) FROM spoiler_stats").fetchone()
        return bool(row[0])

    prepared: list[int] = []
    window.importer.prepared.connect(prepared.append)
    task = asyncio.ensure_future(window.books.import_and_open(books_dir / "metamorphosis.epub"))
    qtbot.waitUntil(task.done, timeout=20000)
    book = task.result()
    assert book is not None and window.reader.book is not None
    assert not stored() and prepared == []  # opened first
    qtbot.waitUntil(lambda: prepared == [book.id], timeout=20000)
    assert stored()


def test_a_book_imported_elsewhere_gets_its_spoiler_counts_once_opened(
    window: Any, library: Library, books_dir: Path, qtbot: Any
) -> None:
    """`margin import` leaves the counts to the window (issue 41): opening the book counts
    them once it is drawn; opening it again counts nothing more."""
    book = import_book(library, books_dir / "metamorphosis.epub").book
    prepared: list[int] = []
    window.importer.prepared.connect(prepared.append)
    window.books.refresh_library()
    window.open_book(book.id)
    qtbot.waitUntil(lambda: prepared == [book.id], timeout=20000)
    row = library.db.execute_sql("SELECT book_id FROM spoiler_stats").fetchall()
    assert row == [(book.id,)]
    window.reader.close_book()
    window.open_book(book.id)
    qtbot.waitUntil(lambda: prepared == [book.id, book.id], timeout=20000)  # one look-up
