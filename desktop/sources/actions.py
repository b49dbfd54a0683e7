"""The Sync menu: Sync now (WebDAV), send and get the position with KOReader, refresh the
calibre libraries, browse a catalogue — and a quiet check every minute for calibre changing
a library (two file stats; the library view is refreshed when it did)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMenu, QMessageBox

from core.errors import MarginError
from desktop.tasks import run_blocking

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from core.books.importer import ImportResult
    from core.store.library import BookInfo
    from core.sync.kosync import Kosync
    from desktop.window.main_window import MainWindow

CALIBRE_CHECK_MS = 60_000


def install(window: MainWindow) -> None:
    """Add the Sync menu to ``window`` and start the calibre check."""
    from desktop.window.menus import add_action

    bar = window.menuBar()
    menu = QMenu("S&ync", window)
    last = bar.actions()
    if last:  # before Help
        bar.insertMenu(last[-1], menu)
    else:
        bar.addMenu(menu)
    add_action(window, menu, "&Sync now", lambda: start(window, sync_now(window)), None)
    add_action(
        window, menu, "Send position to &KOReader", lambda: start(window, kosync_push(window)), None
    )
    add_action(
        window,
        menu,
        "&Get position from KOReader",
        lambda: start(window, kosync_pull(window)),
        None,
    )
    menu.addSeparator()
    add_action(
        window,
        menu,
        "&Refresh calibre libraries",
        lambda: start(window, refresh_calibre(window, force=True)),
        None,
    )
    add_action(window, menu, "&Browse a catalogue…", lambda: open_catalogues(window), None)
    timer = QTimer(window)
    timer.setInterval(CALIBRE_CHECK_MS)
    timer.timeout.connect(lambda: _refresh_while_open(window))
    timer.start()
    window.closed.connect(timer.stop)
    window._calibre_timer = timer  # type: ignore[attr-defined]
    QTimer.singleShot(2000, window, lambda: _refresh_while_open(window))


def _refresh_while_open(window: MainWindow) -> None:
    """The calibre libraries looked at again, unless the window has closed meanwhile (its
    tasks' loop may be gone: a timer firing then started a task with no loop)."""
    if window.isVisible():
        start(window, refresh_calibre(window))


def start[T](window: MainWindow, coro: Coroutine[object, object, T]) -> asyncio.Task[T]:
    return window.tasks.start(coro, key="sources", replace=False)


def _say(window: MainWindow, text: str) -> None:
    window.statusBar().showMessage(text, 8000)


async def sync_now(window: MainWindow) -> None:
    from core.sync.service import sync_now as run

    _say(window, "Syncing…")
    if window.reading_view_built() and window.reader.book is not None:
        window.reader.save_position()
    try:
        report = await run_blocking(run, window.library, window.paths)
    except MarginError as exc:
        _say(window, str(exc))
        return
    _say(
        window,
        f"Synced: {report.summary()}" + (f" {report.problems[0]}" if report.problems else ""),
    )
    window.books.refresh_library()


def _open_book(window: MainWindow) -> BookInfo | None:
    if not window.reading_view_built() or window.reader.book is None:
        _say(window, "Open a book first.")
        return None
    return window.reader.book


async def _kosync[T](
    window: MainWindow, step: Callable[[Kosync, BookInfo], T]
) -> tuple[BookInfo, T] | None:
    """Push or pull (``step``) the open book's position with KOReader's server, off the
    window's thread: (the book, what the server said), or None when there is no book or it
    failed (the reader is told why)."""
    from core.sync.kosync import Kosync as Sync

    book = _open_book(window)
    if book is None:
        return None
    window.reader.save_position()
    book = window.library.get_book(book.id)
    try:
        done = await run_blocking(lambda: step(Sync(window.library, window.paths), book))
    except MarginError as exc:
        _say(window, str(exc))
        return None
    return book, done


async def kosync_push(window: MainWindow) -> None:
    pushed = await _kosync(window, lambda sync, book: sync.push(book))
    if pushed is not None:
        sent = pushed[1]
        _say(window, f"Sent to KOReader: page {sent.page} ({sent.percentage:.0%}).")


async def kosync_pull(window: MainWindow) -> None:
    """Move to the position another device sent; offer to move "read to" there too (the
    spoiler bound follows the reader's choice, never silently)."""
    pulled = await _kosync(window, lambda sync, book: sync.pull(book))
    if pulled is None:
        return
    book, got = pulled
    if got is None:
        _say(window, "KOReader has no position for this book yet.")
        return
    if window.reader.book is None or window.reader.book.id != book.id:
        return  # another book was opened meanwhile
    window.reader.go_to_page(got.page)  # a jump: "read to" stays
    device = got.device or "another device"
    _say(window, f"Moved to where {device} is: page {got.page} ({got.percentage:.0%}).")
    if got.read_to_offer:
        answer = QMessageBox.question(
            window,
            "Move “read to” too?",
            f"{device} is at page {got.page}; you have read up to page {got.read_to} here. "
            f"Move “read to” (what the assistant may read) to page {got.page}?",
        )
        if answer == QMessageBox.StandardButton.Yes:
            window.reader.mark_read_to_here()


async def refresh_calibre(window: MainWindow, *, force: bool = False) -> None:
    from core.sources.calibre_import import changed, libraries, refresh

    folders = libraries(window.paths)
    if not folders:
        if force:
            _say(window, "No calibre library yet: add one in Settings.")
        return

    def work() -> tuple[int, list[str]]:
        touched, problems = 0, []
        for folder in folders:
            if not force and not changed(window.library, folder):
                continue
            try:
                report = refresh(window.library, folder, force=force)
                touched += report.added + report.updated
            except MarginError as exc:
                problems.append(str(exc))
        return touched, problems

    touched, problems = await run_blocking(work)
    if touched:
        window.books.refresh_library()
    if problems:
        _say(window, problems[0])
    elif force:
        _say(window, f"calibre libraries read: {touched} books added or updated.")


def open_catalogues(window: MainWindow) -> None:
    from desktop.sources.opds_dialog import OpdsDialog
    from desktop.sources.sync_settings import catalogues

    def import_file(path: Path) -> ImportResult:
        result = window.app.import_book(path)
        return result

    dialog = OpdsDialog(catalogues(window.paths), import_file, window)
    dialog.finished.connect(lambda *_: window.books.refresh_library())
    dialog.open()
    window._opds_dialog = dialog  # type: ignore[attr-defined]
