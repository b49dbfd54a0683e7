"""What a window holds once a book is open (issue 27, item 9: RSS ≤ 150 MB): the PDF view,
QtPdf and text recognition load only for a PDF; the shelf's covers and text let go while a
book hides it and come back when it shows; freed memory and cached source text are handed
back a moment after big work. Figures: tests/bench/bench_memory.py."""

from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.library import Library
from desktop.library.view import LibraryView, cover_job
from desktop.reader.pdf_view import CACHE_BYTES, CACHE_MIN, PdfView
from desktop.runtime import gc_policy
from tests.desktop.conftest import close_window, open_window
from tests.support.pdfgen import make_text_pdf

ROOT = Path(__file__).resolve().parents[2]
BOOKS = 200

OPEN_BOOKS = """
import json, os, sys, time
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication(["test"])
from core.app import Margin
from core.books.importer import import_book
from core.paths import resolve_paths
from desktop.window.main_window import MainWindow

margin = Margin.open(resolve_paths().ensure())
epub = import_book(margin.library, Path(sys.argv[1])).book
window = MainWindow(margin, restore=False)
window.show()

def spin(seconds):
    from desktop.tasks import reading

    end = time.monotonic() + seconds
    while time.monotonic() < end or (reading() and time.monotonic() < end + 30):
        app.processEvents()
        time.sleep(0.01)

def loaded():
    return sorted(m for m in ("desktop.reader.pdf_view", "PySide6.QtPdf", "core.books.ocr")
                  if m in sys.modules)

window.open_book(epub.id, 1)
spin(1)  # and the reads on workers (the chat's notice, the side panels) are done
out = {"epub": loaded(), "epub_view": type(window.reader.view).__name__}
pdf = import_book(margin.library, Path(sys.argv[2])).book
window.open_book(pdf.id, 1)
spin(1.5)
out["pdf"] = loaded()
out["pdf_view"] = type(window.reader.host.pdf_view()).__name__
print(json.dumps(out), flush=True)
os._exit(0)
"""


def test_an_epub_opens_without_the_pdf_view_or_text_recognition(
    tmp_path: Path, books_dir: Path, pdf_dir: Path
) -> None:
    """In a fresh process (``sys.modules`` is per process): opening an EPUB imports neither
    the PDF view and QtPdf (2.4 MB) nor text recognition and pdfium; a PDF then loads them."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "MARGIN_HOME": str(tmp_path / "home"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",  # never the real keyring
    }
    done = subprocess.run(
        [sys.executable, "-c", OPEN_BOOKS, str(books_dir / "alice_in_wonderland.epub"),
         str(pdf_dir / "pdflatex-4-pages.pdf")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["epub_view"] == "TextView"
    assert out["epub"] == []
    assert out["pdf"] == ["PySide6.QtPdf", "core.books.ocr", "desktop.reader.pdf_view"]
    assert out["pdf_view"] == "PdfView"


def many_books(library: Library, tmp_path: Path, books_dir: Path, count: int) -> None:
    text = (books_dir / "metamorphosis.txt").read_text(encoding="utf-8")[:4000]
    for i in range(count):
        path = tmp_path / f"book{i:02}.txt"
        path.write_text(f"Book {i:02}\n\n{text}", encoding="utf-8")
        import_book(library, path)


def test_the_shelf_lets_go_of_its_covers_behind_a_book_and_shows_them_again(
    app: Any, qtbot: Any, tmp_path: Path, books_dir: Path, real_font: str
) -> None:
    many_books(app.library, tmp_path, books_dir, BOOKS)
    window = open_window(app, qtbot, (900, 600))
    try:
        shelf = window.findChild(LibraryView)
        assert shelf is not None
        qtbot.waitUntil(lambda: shelf.model.rowCount() == BOOKS, timeout=10000)
        shas = [b.sha256 for b in shelf.model.rows]
        qtbot.waitUntil(lambda: all(shelf.covers.has(s) for s in shas), timeout=30000)
        viewport = shelf.view.viewport().rect()
        on_screen = [
            b
            for row, b in enumerate(shelf.model.rows)
            if shelf.view.visualRect(shelf.model.index(row, 0)).intersects(viewport)
        ]
        assert 0 < len(on_screen) < BOOKS / 4  # the rest are further down
        # the reader double-clicks the first book: the shelf hides behind it
        first = shelf.view.visualRect(shelf.model.index(0, 0)).center()
        qtbot.mouseClick(shelf.view.viewport(), Qt.MouseButton.LeftButton, pos=first)
        qtbot.mouseDClick(shelf.view.viewport(), Qt.MouseButton.LeftButton, pos=first)
        qtbot.waitUntil(lambda: window.reader.book is not None, timeout=10000)
        assert not shelf.isVisible()
        kept = [s for s in shas if shelf.covers.has(s)]
        assert {b.sha256 for b in on_screen} <= set(kept)  # what it shows when it comes back
        assert len(kept) <= 3 * len(on_screen) < BOOKS, "covers far from its place were let go"
        # back to the library (the toolbar's "Back" is the book's; Ctrl+B is the shelf's)
        QTest.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(shelf.isVisible, timeout=5000)
        # shown at once, no blank cell (at the size they had, should the cells have changed)
        assert all(shelf.covers.pixmap(cover_job(b)) is not None for b in on_screen)
        qtbot.waitUntil(lambda: all(shelf.covers.has(s) for s in shas), timeout=30000)
    finally:
        close_window(qtbot, window)


def test_cached_source_text_is_dropped_a_moment_after_big_work(qtbot: Any) -> None:
    linecache.getlines(__file__)
    assert __file__ in linecache.cache
    gc_policy.give_back_soon()
    gc_policy.give_back_soon()  # a second call restarts the wait: one tidy-up
    assert __file__ in linecache.cache  # not at once: the book's follow-up reads come first
    qtbot.waitUntil(lambda: __file__ not in linecache.cache, timeout=gc_policy.SETTLE_MS + 3000)


def test_the_idle_collection_gives_memory_back(qtbot: Any) -> None:
    policy = gc_policy.install()
    assert policy is not None
    linecache.getlines(__file__)
    policy.last_input -= 100
    policy.last_collect -= 1000
    assert policy.maybe_collect()
    assert __file__ not in linecache.cache


def test_a_pdf_keeps_a_few_rendered_pages_however_far_one_reads(
    app: Any, qtbot: Any, tmp_path: Path, real_font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """…and the pages it lets go are given back to the system once the reader pauses."""
    given: list[int] = []
    monkeypatch.setattr(gc_policy, "give_back_soon", lambda: given.append(len(given)))
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 31)]
    book = import_book(app.library, make_text_pdf(tmp_path / "long.pdf", texts)).book
    window = open_window(app, qtbot, (1280, 800))
    try:
        window.open_book(book.id, 1)
        view = window.reader.view
        assert isinstance(view, PdfView)
        view.setFocus()
        while window.reader.page < 25:  # the reader pages down through 25 pages
            QTest.keyClick(view, Qt.Key.Key_PageDown)
            qtbot.waitUntil(lambda: view._key(view.current - 1) in view.cache, timeout=5000)
        held = sum(image.sizeInBytes() for image in view.cache.values())
        assert len(view.cache) <= CACHE_MIN or held <= CACHE_BYTES
        assert given, "pages let go: their memory is handed back"
        assert view._key(view.current - 1) in view.cache  # the page on screen stays drawn
        QTest.keyClick(view, Qt.Key.Key_PageDown)  # and the next one was rendered ahead
        assert view._key(view.current - 1) in view.cache
    finally:
        close_window(qtbot, window)


ASK_KEY = """
import sys
from core.api_key import get_api_key, key_storage_available
print(get_api_key(), key_storage_available(), "keyring" in sys.modules)
"""


def test_without_a_session_bus_the_keyring_is_not_loaded(tmp_path: Path) -> None:
    """Linux with no D-Bus session (a server, a container): no keyring can exist, and finding
    that out through keyring imported every backend (13 MB). One named in
    PYTHON_KEYRING_BACKEND or keyringrc.cfg is still asked."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",)}
    env |= {"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.pop("PYTHON_KEYRING_BACKEND", None)

    def ask(extra: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-c", ASK_KEY], cwd=ROOT, env=env | extra,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert ask({}) == "None False False"
    memory = {"PYTHON_KEYRING_BACKEND": "tests.support.memory_keyring.MemoryKeyring"}
    assert ask(memory) == "None True True"
    config = tmp_path / "config" / "python_keyring"
    config.mkdir(parents=True)
    (config / "keyringrc.cfg").write_text(
        "[backend]\ndefault-keyring=tests.support.memory_keyring.MemoryKeyring\n"
    )
    assert ask({}) == "None True True"
