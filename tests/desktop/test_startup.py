"""Opening the library at start-up: off the UI thread, with a notice while a new version
updates (migrates) it."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QProgressDialog

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from core.store.migrations import SCHEMA_VERSION
from desktop.app import UPDATING, open_library
from tests.desktop.conftest import run_until


def _library_of_the_previous_version(home: Path, books_dir: Path) -> None:
    paths = resolve_paths(home)
    library = Library.open(paths)
    import_book(library, books_dir / "metamorphosis.txt")
    library.close()
    con = sqlite3.connect(paths.database)
    con.execute("DROP TABLE spoiler_stats")  # what schema 9 added
    con.execute("PRAGMA user_version = 8")
    con.commit()
    con.close()


def _notices() -> list[QProgressDialog]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QProgressDialog) and w.isVisible()
    ]


@pytest.mark.parametrize("quiet", [False, True])
def test_an_update_says_so_and_the_library_works_after(
    tmp_path: Path, books_dir: Path, qtbot: Any, caplog: pytest.LogCaptureFixture, quiet: bool
) -> None:
    home = tmp_path / "home"
    _library_of_the_previous_version(home, books_dir)
    seen: list[str] = []

    def look() -> None:
        seen.extend(d.labelText() for d in _notices())

    with caplog.at_level(logging.INFO, logger="margin"):
        margin = run_until(
            qtbot, _watching(open_library(resolve_paths(home), quiet=quiet, notice_after=0), look)
        )
    try:
        assert (UPDATING in seen) is not quiet, seen
        assert not _notices()  # gone once the library is open
        assert ("updating the library's database" in caplog.text) is not quiet
        # opened on a worker thread; used here, on the UI thread
        db = margin.db
        assert db.execute_sql("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        book = margin.library.list_books()[0]
        assert margin.search.search_book(book.id, "Gregor sister violin")
        assert "strenuous career" in margin.library.page(book.id, 3).text
    finally:
        margin.close()


async def _watching(coro: Any, look: Any) -> Any:
    """Run ``coro``, calling ``look`` every few milliseconds meanwhile (the loop is free)."""
    import asyncio

    task = asyncio.ensure_future(coro)
    while not task.done():
        look()
        await asyncio.sleep(0.002)
    return task.result()


def test_a_library_that_cannot_open_raises_for_the_caller(tmp_path: Path, qtbot: Any) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "library.sqlite3").write_bytes(b"this is not a database" * 100)
    from core.errors import StorageError

    with pytest.raises(StorageError, match="damaged"):
        run_until(qtbot, open_library(resolve_paths(home), notice_after=0))
    assert not _notices()


# the window paints before the reader and the chat pane exist (issue 27 item 8) ----------


def test_the_window_path_knows_every_book_suffix_without_the_parsers() -> None:
    from core.books.parse import SUFFIXES
    from desktop.library.book_files import BOOK_SUFFIXES

    assert set(SUFFIXES) == BOOK_SUFFIXES


def test_nothing_slow_is_imported_before_the_first_paint(tmp_path: Path) -> None:
    """The reader, the chat pane, the conversations store and the book parsers load after
    the window is painted (``-X importtime`` lines come in import order on stderr); the
    model's SDK too, with a key that connects a model (the first question's warm-up)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "MARGIN_STARTUP_TIMING": "1",
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(root),
        "ANTHROPIC_API_KEY": "sk-ant-startup-test",  # a model connected
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # never reached
    }
    env.pop("MARGIN_HOME", None)
    home = str(tmp_path / "home")
    command = ["-X", "importtime", "-m", "desktop", "--exit-after-shown", "--data-dir", home]
    done = subprocess.run(
        [sys.executable, *command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before = done.stderr.split("margin: first paint at", 1)
    assert len(before) == 2, done.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[1].strip() for line in before[0].splitlines() if "|" in line}
    assert "desktop.window.main_window" in loaded and "core.store.library" in loaded
    slow = {
        "desktop.reader.reader",
        "desktop.chat.pane",
        "core.store.conversations",
        "core.books.parse",
        "core.books.importer",
        "core.search.fts",
        "anthropic",
    }
    assert not slow & loaded


def _window(app: Any, qtbot: Any) -> Any:
    from desktop.window.main_window import MainWindow

    window = MainWindow(app)
    qtbot.addWidget(window)
    return window


def test_the_reading_view_is_built_after_the_first_frame_and_reopens_the_book(
    app: Any, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from tests.desktop.conftest import close_window

    book = import_book(app.library, books_dir / "metamorphosis.txt").book
    first = _window(app, qtbot)
    first.open_book(book.id, 3)
    close_window(qtbot, first)
    second = _window(app, qtbot)
    try:
        # the first frame: the menus and an empty page where the book will be
        assert not second.reading_view_built()
        assert second.views.currentWidget() is second.opening
        assert second.action_next.isEnabled()
        second.show()
        qtbot.waitExposed(second)
        assert not second.reading_view_built()
        second.finish_building_if_open()  # what the window does after its first paint
        assert second.reading_view_built()
        assert second.views.currentWidget() is second.splitter
        assert second.reader.book is not None and second.reader.book.id == book.id
        assert second.reader.page == 3
        assert second.windowTitle() == f"{book.title} — Margin"
    finally:
        close_window(qtbot, second)


def test_closed_before_the_reading_view_was_built_keeps_the_book(
    app: Any, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from tests.desktop.conftest import close_window

    book = import_book(app.library, books_dir / "metamorphosis.txt").book
    first = _window(app, qtbot)
    first.open_book(book.id, 5)
    first.panes.set_side_visible(True)
    close_window(qtbot, first)
    second = _window(app, qtbot)
    close_window(qtbot, second)  # the timer that builds it comes too late
    second.finish_building_if_open()
    assert not second.reading_view_built()
    third = _window(app, qtbot)
    try:
        # used before its first paint (tests, --open, a menu's keys): built there and then
        assert third.reader.book is not None and third.reader.book.id == book.id
        assert third.reader.page == 5
        assert third.side_button.isChecked()
    finally:
        close_window(qtbot, third)


def test_an_up_to_date_library_is_told_from_its_header(tmp_path: Path, books_dir: Path) -> None:
    """The window paints before asyncio loads only for a library needing no migration."""
    from desktop.app import _library_up_to_date

    home = tmp_path / "lib"
    paths = resolve_paths(home)
    assert not _library_up_to_date(paths)  # no library yet: created on a worker, as before
    Library.open(paths).close()
    assert _library_up_to_date(paths)
    _library_of_the_previous_version(tmp_path / "old", books_dir)
    assert not _library_up_to_date(resolve_paths(tmp_path / "old"))
    paths.database.write_bytes(b"not a database")
    assert not _library_up_to_date(paths)


def test_the_quicker_feature_check_answers_as_pyside_does() -> None:
    import sys

    import core.errors
    import desktop.tasks
    from desktop.app import _quicker_feature_check

    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if original is None:
        pytest.skip("this PySide6 has no _mod_uses_pyside")
    try:
        _quicker_feature_check()
        quicker = feature._mod_uses_pyside  # type: ignore[union-attr]
        assert quicker is not original
        for module in (desktop.tasks, core.errors, sys, pytest):
            assert quicker(module) == original(module), module
    finally:
        feature._mod_uses_pyside = original  # type: ignore[union-attr]


# an up-to-date library: the first frame before the library's code (issue 41) --------------


def _up_to_date_library(home: Path, books_dir: Path) -> Any:
    paths = resolve_paths(home)
    library = Library.open(paths)
    book = import_book(library, books_dir / "metamorphosis.txt").book
    library.close()
    return paths, book


def test_the_first_paint_comes_before_the_library_s_code(tmp_path: Path, books_dir: Path) -> None:
    """Every start but the first of a version: the window is painted (its books on the
    shelf) before peewee and the store, logging.handlers, asyncio and qasync load."""
    import os
    import subprocess
    import sys

    paths, _ = _up_to_date_library(tmp_path / "home", books_dir)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "MARGIN_STARTUP_TIMING": "1", "QT_QPA_PLATFORM": "offscreen"}
    env.pop("MARGIN_HOME", None)
    home = str(paths.data)
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "desktop",
            "--exit-after-shown",
            "--data-dir",
            home,
        ],
        cwd=root,
        env={**env, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stderr.split("margin: first paint at", 1)
    loaded = {line.rsplit("|", 1)[1].strip() for line in before.splitlines() if "|" in line}
    later = {line.rsplit("|", 1)[1].strip() for line in after.splitlines() if "|" in line}
    assert "core.store.shelf" in loaded and "desktop.window.main_window" in loaded
    code = {"peewee", "core.app", "core.store.library", "logging.handlers", "asyncio", "qasync"}
    assert not code & loaded, code & loaded
    assert {"core.app", "asyncio"} <= later  # then the library opens and the loop runs


def test_a_window_shows_its_shelf_then_gets_its_library(
    tmp_path: Path, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from core.app import Margin
    from core.store.shelf import read_shelf
    from desktop.window.main_window import MainWindow
    from tests.desktop.conftest import close_window

    paths, book = _up_to_date_library(tmp_path / "home", books_dir)
    window = MainWindow(None, paths=paths, shelf=read_shelf(paths.database, paths.data))
    qtbot.addWidget(window)
    margin = Margin.open(paths)
    try:
        assert not window.attached()
        assert window.library_panel.model.rowCount() == 1  # in the first frame already
        assert window.library_panel.model.books[0].title == book.title
        # the shelf shows on the window's colour (its viewport found by name, not viewport())
        assert not window.library_panel.view.viewport().autoFillBackground()
        window.attach(margin)
        assert window.library is margin.library and window.importer.library is margin.library
    finally:
        close_window(qtbot, window)
        margin.close()


def test_the_library_asked_for_before_it_is_attached_opens_at_once(
    tmp_path: Path, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from desktop.window.main_window import MainWindow
    from tests.desktop.conftest import close_window

    paths, book = _up_to_date_library(tmp_path / "home", books_dir)
    window = MainWindow(None, paths=paths, shelf=[])
    qtbot.addWidget(window)
    try:
        assert [b.id for b in window.library.list_books()] == [book.id]
        assert window.attached() and window.importer.library is window.library
    finally:
        close_window(qtbot, window)
        window.app.close()


def test_a_discarded_window_never_opens_its_library(
    tmp_path: Path, books_dir: Path, qtbot: Any, real_font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window whose library could not open is discarded: anything it scheduled that asks
    for the library later fails loudly rather than opening it (the models would bind to that
    library, away from the one the process uses)."""
    from core.app import Margin
    from desktop.window.main_window import MainWindow

    paths, _book = _up_to_date_library(tmp_path / "home", books_dir)
    opened: list[object] = []
    monkeypatch.setattr(Margin, "open", classmethod(lambda cls, p, **_: opened.append(p)))
    window = MainWindow(None, paths=paths, shelf=[])
    window.discard()
    with pytest.raises(RuntimeError, match="closed before its library"):
        _ = window.library
    assert opened == [] and not window.attached() and not window.isVisible()


def test_start_up_falls_back_when_the_shelf_or_the_library_fails(
    tmp_path: Path, books_dir: Path, qtbot: Any, real_font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shelf that cannot be read alone: the library opens first, as before; a library that
    cannot open after the first paint: that window goes, and ``run_window`` opens it again
    (and shows the reader why when it fails)."""
    import core.store.shelf
    from core.app import Margin
    from core.errors import StorageError
    from desktop.app import parse_args, show_up_to_date
    from tests.desktop.conftest import close_window

    paths, book = _up_to_date_library(tmp_path / "home", books_dir)
    args = parse_args(["--data-dir", str(paths.data)])

    def unreadable(*_: object) -> list[Any]:
        raise sqlite3.OperationalError("no such column: position")

    monkeypatch.setattr(core.store.shelf, "read_shelf", unreadable)
    shown = show_up_to_date(args, paths)
    assert shown is not None
    margin, window = shown
    try:
        assert window.attached() and window.isVisible()
        assert [b.id for b in window.library_panel.model.books] == [book.id]
    finally:
        close_window(qtbot, window)
        margin.close()
    monkeypatch.undo()

    def fails(*_: object, **__: object) -> Margin:
        raise StorageError("locked", "The library is busy.")

    monkeypatch.setattr(Margin, "open", fails)
    before = set(QApplication.topLevelWidgets())
    assert show_up_to_date(args, paths) is None
    assert not [w for w in set(QApplication.topLevelWidgets()) - before if w.isVisible()]
