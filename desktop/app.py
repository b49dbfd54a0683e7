"""The ``margin`` entry point, and starting the window: arguments, folders, logging, the
exception hook, Qt, the asyncio loop.

``margin`` with no arguments, a book file, or window options (``--open``, ``--screenshot``)
opens the window; anything else is a subcommand for ``core.cli`` (which never imports Qt).
Nothing slow is on the window's path (no ``anthropic``, no QtPdf, no book pages): the window
must be on screen within a second.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.library.book_files import BOOK_SUFFIXES

if TYPE_CHECKING:
    import argparse  # (loaded by parse_args: a subcommand has its own parser, core.cli)
    import logging

    from core.app import Margin
    from core.paths import Paths
    from core.store.book_info import BookInfo
    from desktop.window.main_window import MainWindow

_T0 = time.perf_counter()
WINDOW_OPTIONS = ("--open", "--page", "--screenshot", "--exit-after-shown")


def _log() -> logging.Logger:
    import logging  # not at the module's top: ``margin search --all`` never logs

    return logging.getLogger("margin.app")


def wants_window(argv: Sequence[str]) -> bool:
    """Whether ``margin ARGS`` means the window rather than a subcommand."""
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--data-dir":
        rest = rest[2:]
    elif rest and rest[0].startswith("--data-dir="):
        rest = rest[1:]
    if not rest:
        return True
    first = rest[0]
    if first.split("=", 1)[0] in WINDOW_OPTIONS:
        return True
    return Path(first).suffix.lower() in BOOK_SUFFIXES and Path(first).is_file()


def main(argv: Sequence[str] | None = None) -> int:
    """``margin``: the window, or a subcommand."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["--version"] and wants_window(args):
        return window_main(args)
    from core.cli import main as cli_main

    return cli_main(args, fast_exit=argv is None)  # the real process: quick exit after `ask`


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    import argparse

    parser = argparse.ArgumentParser(
        prog="margin", description="Margin: read a book and talk about it."
    )
    parser.add_argument("--data-dir", metavar="DIR", help="keep the library in DIR")
    parser.add_argument("--open", metavar="FILE", help="open (importing if needed) this book")
    parser.add_argument("--page", type=int, default=None, metavar="N", help="turn to page N")
    parser.add_argument(
        "--screenshot",
        metavar="PNG",
        help="save a picture of the window once the page is drawn, then exit",
    )
    parser.add_argument(
        "--exit-after-shown", action="store_true", help="quit as soon as the window is visible"
    )
    parser.add_argument("book", nargs="?", help="a book file to open")
    args = parser.parse_args(list(argv))
    if args.book and not args.open:
        args.open = args.book
    if args.page is not None and args.page < 1:
        parser.error("--page must be 1 or more")
    return args


def window_main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import logging

    from core.log import setup_logging
    from core.paths import resolve_paths

    paths = resolve_paths(args.data_dir)
    unusable = ""  # shown in a dialog once Qt runs (a desktop launcher shows no stderr)
    try:
        paths.ensure()
        setup_logging(paths)
    except OSError as exc:
        logging.getLogger().addHandler(logging.NullHandler())
        if not paths.database.is_file():  # an existing library opens for reading only
            unusable = f"Margin cannot use its data folder {paths.data}: {exc.strerror or exc}."
            print(f"margin: {unusable}", file=sys.stderr)
    from desktop.runtime import excepthook

    excepthook.install()
    if not _library_up_to_date(paths):
        # the library's code (peewee, sqlite3, the store: ~100 modules) before Qt: PySide6
        # reads the source of every module imported after it (to look for ``__feature__``).
        # An up-to-date library loads it once the window is painted (``show_up_to_date``).
        import core.app  # noqa: F401

    os.environ.setdefault("QT_ENABLE_HIGHDPI_SCALING", "1")
    os.environ.setdefault("QT_API", "pyside6")  # qasync: no trying PyQt5, PyQt6, PySide2 first
    from PySide6.QtGui import QGuiApplication, QIcon
    from PySide6.QtWidgets import QApplication

    _quicker_feature_check()
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        QGuiApplication.highDpiScaleFactorRoundingPolicy().PassThrough
    )
    app = QApplication.instance() or QApplication(["Margin"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Margin")
    app.setOrganizationName("Margin")
    app.setDesktopFileName("app.margin.Margin")
    from desktop.resources import resources_dir

    icon = resources_dir() / "icons" / "margin-256.png"
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    app.setQuitOnLastWindowClosed(False)
    if unusable:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.critical(None, "Margin cannot start", unusable)
        return 1
    shown = show_up_to_date(args, paths)
    # asyncio and qasync (~15 % of the start-up's CPU) once the window is painted
    import asyncio  # not at the module's top: a CLI command never loads it

    import qasync

    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        try:
            return runner.run(run_window(app, args, paths, shown))
        except KeyboardInterrupt:
            return 130


def _quicker_feature_check() -> None:
    """PySide6 reads the source of every module imported after it, through
    ``inspect.getsource`` (linecache, decoding), to see whether it says "PySide6" (a module
    that does may use ``from __feature__ import ...``): ~6 % of the start-up's CPU for the
    window's ~100 modules. The same question answered by reading the file's bytes. Margin
    uses no ``__feature__``; a module without a ``.py`` file (or a PySide6 without this
    function) gets PySide6's own answer."""
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original):
        return

    def uses_pyside(module: object) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as source:
                    return b"PySide6" in source.read()
            except OSError:
                pass
        return bool(original(module))

    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]


def _library_up_to_date(paths: Paths) -> bool:
    """Whether the library exists and needs no migration: then it opens in milliseconds on
    this thread. The schema version is read from the file's header (``PRAGMA user_version``
    is the big-endian integer at byte 60); a page not yet checkpointed from the write-ahead
    log can only make it look older (the worker path then opens it) or newer (opening says
    so and the worker path reports it): ``Margin.open`` checks the version itself."""
    from core.store.migrations import SCHEMA_VERSION

    try:
        with open(paths.database, "rb") as file:
            header = file.read(100)
    except OSError:
        return False
    return (
        len(header) == 100
        and header.startswith(b"SQLite format 3\x00")
        and int.from_bytes(header[60:64], "big") == SCHEMA_VERSION
    )


def show_up_to_date(args: argparse.Namespace, paths: object) -> tuple[Margin, MainWindow] | None:
    """An up-to-date library (every start but the first of a new version): paint the window
    here, before asyncio and qasync are imported, with the books read by ``sqlite3`` alone
    (``core.store.shelf``); then load the library's code (peewee and the store, ~40 ms of
    CPU), open it and give it to the window. ``None`` when the library needs creating or
    migrating (``run_window`` opens it on a worker, with a notice) or cannot be opened
    (``run_window`` tries again and says why)."""
    from core.paths import Paths

    assert isinstance(paths, Paths)
    if not _library_up_to_date(paths):
        return None
    from PySide6.QtWidgets import QApplication

    from core.store.shelf import read_shelf

    try:
        shelf = read_shelf(paths.database, paths.data)
    except Exception:  # the library's own code reads it (and says what is wrong)
        _log().warning("reading the shelf without the library's code failed", exc_info=True)
        return _show_opened(args, paths)
    window = _make_window(None, args, show=False, paths=paths, shelf=shelf)
    window.show()
    QApplication.processEvents()  # no loop yet: the window is painted here
    try:
        margin = _open_here(paths)
    except Exception:
        _log().warning("opening the library after the first paint failed", exc_info=True)
        window.discard()
        return None
    window.attach(margin)
    return margin, window


def _open_here(paths: Paths) -> Margin:
    from core.app import Margin

    margin = Margin.open(paths)
    margin.db.close()  # this thread's connection: the window's threads open their own
    return margin


def _show_opened(args: argparse.Namespace, paths: Paths) -> tuple[Margin, MainWindow] | None:
    """The library opened first, then the window painted (with its books listed on a
    worker): when its shelf could not be read alone."""
    from PySide6.QtWidgets import QApplication

    try:
        margin = _open_here(paths)
    except Exception:
        _log().warning("opening the library before the loop failed", exc_info=True)
        return None
    window = _make_window(margin, args, show=False)
    _wait_listed(window)
    window.show()
    QApplication.processEvents()  # no loop yet: the window is painted here
    return margin, window


def _wait_listed(window: MainWindow, limit_ms: int = 1000) -> None:
    """Until the library panel has its books (listed on a worker, 1–30 ms), at most
    ``limit_ms``: the first frame shows the shelf, as it did when the loop ran first,
    rather than an empty panel filled a moment later."""
    from PySide6.QtCore import QEventLoop, QTimer

    waiting = QEventLoop()
    window.libraryListed.connect(waiting.quit)
    QTimer.singleShot(limit_ms, waiting.quit)
    waiting.exec()
    window.libraryListed.disconnect(waiting.quit)


def _make_window(
    margin: Margin | None,
    args: argparse.Namespace,
    *,
    show: bool = True,
    paths: Paths | None = None,
    shelf: list[BookInfo] | None = None,
) -> MainWindow:
    from PySide6.QtWidgets import QApplication

    from desktop.theme import apply_app_theme
    from desktop.window.main_window import MainWindow
    from desktop.window.preferences import Preferences

    app = QApplication.instance()
    if isinstance(app, QApplication):  # the style and palette before any widget: none is
        # polished twice (setting the style re-polishes every widget there is)
        folder = margin.paths if margin is not None else paths
        assert folder is not None
        apply_app_theme(app, Preferences(folder).theme())
    window = MainWindow(margin, restore=not args.screenshot, paths=paths, shelf=shelf)
    window.set_theme(window.preferences.theme())
    if os.environ.get("MARGIN_STARTUP_TIMING"):
        from desktop.runtime.startup_timing import watch_first_paint

        watch_first_paint(window, _T0)
    if show:
        window.show()
    return window


async def run_window(
    app: object,
    args: argparse.Namespace,
    paths: object,
    shown: tuple[Margin, MainWindow] | None = None,
) -> int:
    import asyncio  # not at the module's top: a CLI command never loads it

    from PySide6.QtWidgets import QApplication

    from core.paths import Paths

    assert isinstance(app, QApplication) and isinstance(paths, Paths)
    from desktop.tasks import pool

    # asyncio's own executor work (DNS lookups for the model server) on the window's one pool
    asyncio.get_running_loop().set_default_executor(pool())
    if shown is not None:
        margin, window = shown
        return await _run_shown(margin, window, args, painted=True)
    try:
        margin = await open_library(paths, quiet=bool(args.screenshot or args.exit_after_shown))
    except Exception as exc:
        from core.errors import MarginError

        message = (
            str(exc) if isinstance(exc, MarginError) else f"Margin cannot open its library: {exc}"
        )
        _log().error("cannot open the library: %s", message)
        print(f"margin: {message}", file=sys.stderr)
        if not args.screenshot and not args.exit_after_shown:
            from PySide6.QtWidgets import QMessageBox

            QMessageBox.critical(None, "Margin cannot start", message)
        return 1
    return await _run_shown(margin, _make_window(margin, args), args, painted=False)


async def _run_shown(
    margin: Margin, window: MainWindow, args: argparse.Namespace, *, painted: bool
) -> int:
    import asyncio

    from PySide6.QtCore import QTimer

    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_closed() -> None:
        if not done.done():
            done.set_result(0)

    window.closed.connect(on_closed)
    # the reader and the chat pane are built once the window is painted (or on first use)
    if painted:
        QTimer.singleShot(0, window.finish_building_if_open)
    else:
        from desktop.runtime.startup_timing import after_first_paint

        after_first_paint(window, window.finish_building_if_open)
    QTimer.singleShot(
        500, window.finish_building_if_open
    )  # no paint (a minimised start): still built
    # a turn of the loop paints it (never processEvents() inside a coroutine: qasync 0.28
    # loses a task stepped from there)
    await asyncio.sleep(0.001)
    if os.environ.get("MARGIN_STARTUP_TIMING"):
        print(
            f"margin: window shown after {(time.perf_counter() - _T0) * 1000:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
    if margin.library.read_only and not (args.screenshot or args.exit_after_shown):
        from desktop.library.repair import show_read_only_notice

        show_read_only_notice(window)
    code = 0
    if args.exit_after_shown and not args.open:
        window.close()
    elif args.open or args.screenshot:
        if not args.screenshot and not args.exit_after_shown:
            window.books.start_background_work()  # `margin FILE`: the same start-up work as `margin`
        code = await open_and_capture(window, args)
        if args.screenshot or args.exit_after_shown:
            window.close()
    else:
        window.books.start_background_work()
    if not window.isVisible() and not done.done():
        done.set_result(code)
    result = await done
    await window.shutdown()
    margin.close()
    return code or result


UPDATING = (
    "Margin is updating your library for this version. This happens once and can take a "
    "minute for a large library; your books, notes and conversations are kept."
)


async def open_library(paths: object, *, quiet: bool = False, notice_after: float = 0.5) -> Margin:
    import asyncio  # not at the module's top: a CLI command never loads it

    """Open the library on a worker thread. Opening is quick, but the first start of a new
    version may migrate a large library (seconds): the event loop keeps running, and after
    ``notice_after`` seconds a small window says what is happening."""
    from core.app import Margin

    def open_here() -> Margin:
        margin = Margin.open(paths)  # type: ignore[arg-type]
        margin.db.close()  # this thread's connection: the window's threads open their own
        return margin

    from desktop.tasks import run_blocking

    task = asyncio.ensure_future(run_blocking(open_here))
    finished, _ = await asyncio.wait({task}, timeout=notice_after)
    notice = None
    if not finished and not quiet:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QLabel, QProgressDialog

        notice = QProgressDialog("", "", 0, 0)
        label = QLabel(UPDATING)
        label.setWordWrap(True)
        notice.setLabel(label)
        notice.setCancelButton(None)  # the migration is one transaction a step: let it finish
        notice.setFixedWidth(460)
        notice.setWindowTitle("Margin")
        notice.setWindowModality(Qt.WindowModality.ApplicationModal)
        notice.setMinimumDuration(0)
        notice.show()
        _log().info("updating the library's database")
    try:
        return await task
    finally:
        if notice is not None:
            notice.close()
            notice.deleteLater()


async def open_and_capture(window: object, args: argparse.Namespace) -> int:
    import asyncio  # not at the module's top: a CLI command never loads it

    from core.errors import MarginError
    from desktop.window.main_window import MainWindow

    assert isinstance(window, MainWindow)
    try:
        if args.open:
            book = await window.books.import_and_open(Path(args.open), page=args.page)
            if book is None:
                return 1
        if args.screenshot:
            # the chat reads its conversation on a worker: shown in the picture too (and no
            # task is left to start inside the reader's processEvents below)
            for _ in range(500):
                if not hasattr(window.chat, "history_complete") or window.chat.history_complete():
                    break
                await asyncio.sleep(0.01)
            await window.reader.wait_drawn(limit=15.0)
            path = Path(args.screenshot)
            path.parent.mkdir(parents=True, exist_ok=True)
            if not window.grab().save(str(path), "PNG"):
                print(f"margin: could not write the screenshot {path}", file=sys.stderr)
                return 1
    except MarginError as exc:
        print(f"margin: {exc}", file=sys.stderr)
        return 1
    except TimeoutError:
        print("margin: the page was not drawn in time", file=sys.stderr)
        return 1
    return 0
