"""Imports run in a worker thread; progress comes back to the UI thread through a queued
signal, throttled so a fast parser cannot flood the event loop."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, cast

import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMainWindow, QWidget

from core.errors import BookCode, BookError, MarginError
from core.progress import CancelToken
from desktop.accessibility import announce
from desktop.tasks import in_background, run_blocking

if TYPE_CHECKING:
    from core.books.importer import ImportResult
    from core.store.library import Library

log = logging.getLogger("margin.import")
# the imported book opens first, then its spoiler counts start: once it is drawn (the window
# calls ``prepare_soon``), or after this long when no book is opened
PREPARE_AFTER_MS = 5000
PREPARE_AFTER_DRAWN_MS = 300


class ImportController(QObject):
    started = Signal(str)  # file name
    progressed = Signal(float, str)
    finished = Signal()
    failed = Signal(str)  # a sentence for people
    imported = Signal(object)  # ImportResult
    prepared = Signal(int)  # a book's spoiler check counts are stored (its id)

    def __init__(self, library: Library | None, parent: QObject | None = None) -> None:
        """``library`` is ``None`` only in a window painted before its library opened: the
        window sets it (``MainWindow.attach``) before the event loop runs."""
        super().__init__(parent)
        self.library = cast("Library", library)
        self.token: CancelToken | None = None
        self.busy = False
        self.unprepared: list[int] = []  # imported books whose spoiler counts are to come
        self.preparing: Future[bool] | None = None

    def prepare_soon(self) -> None:
        """The imported book is on screen: its spoiler counts may start."""
        if self.unprepared:
            QTimer.singleShot(PREPARE_AFTER_DRAWN_MS, self, self._prepare_next)

    def prepare_opened(self, book_id: int) -> bool:
        """A book opened: its spoiler counts are to come (once it is drawn: the window
        calls ``prepare_soon``) when they are not stored yet; ``margin import`` leaves them
        to the window, and counted ones cost one look-up. False when already queued."""
        if book_id in self.unprepared:
            return False
        self.unprepared.append(book_id)
        return True

    def _prepare_next(self) -> None:
        """Count the spoiler check's statistics of the next imported book on a worker
        thread, one book at a time (a question asked meanwhile counts them itself)."""
        if self.preparing is not None or not self.unprepared:
            return
        book_id = self.unprepared.pop(0)

        def prepare() -> bool:
            from core.agent.spoiler_stats import prepare_book  # (not the whole check)

            return prepare_book(self.library.db, book_id)

        def done(_counted: object) -> None:
            if not shiboken6.isValid(self):  # the window closed meanwhile
                return
            self.preparing = None
            self.prepared.emit(book_id)
            self._prepare_next()

        def failed(exc: Exception) -> None:
            log.warning("spoiler check counts for book %s not prepared: %s", book_id, exc)
            done(False)

        self.preparing = in_background(prepare, then=done, failed=failed)

    def cancel(self) -> None:
        if self.token is not None:
            self.token.cancel()

    async def import_files(
        self, paths: list[Path], *, open_first: bool = False
    ) -> list[ImportResult]:
        """Import one file after the other; errors are reported and the rest go on.
        ``open_first``: the window opens the first book next (its deep-search vectors of
        the pages ahead start while it is stored)."""
        from core.books.importer import import_book  # the parsers: not on the start-up path

        results: list[ImportResult] = []
        errors: list[str] = []
        self.busy = True
        try:
            for path in paths:
                self.token = CancelToken()
                self.started.emit(path.name)
                last = 0.0

                def progress(fraction: float, message: str) -> None:
                    nonlocal last
                    now = time.monotonic()
                    if fraction >= 1.0 or now - last > 0.05:
                        last = now
                        self.progressed.emit(fraction, message)  # queued to the UI thread

                try:
                    opens = open_first and path == paths[0]
                    result = await self._import(import_book, path, progress, opens=opens)
                except BookError as exc:
                    if exc.code == BookCode.CANCELLED:
                        errors.append(f"Stopped adding {path.name}.")
                        break
                    errors.append(str(exc))
                    continue
                except MarginError as exc:
                    errors.append(str(exc))
                    continue
                except Exception:
                    log.exception("import of %s failed", path)
                    errors.append(
                        f"{path.name} could not be added because of an unexpected problem (details in the log)."
                    )
                    continue
                results.append(result)
                self.imported.emit(result)
                if not result.already_present:
                    self.unprepared.append(result.book.id)
        finally:
            self.busy = False
            self.token = None
            self.finished.emit()
            if self.unprepared:
                # the spoiler check's counts (2-4 s of CPU for a 16 MiB EPUB): after the book
                # has opened, not before, and still long before its first question
                QTimer.singleShot(PREPARE_AFTER_MS, self, self._prepare_next)
            from desktop.runtime.gc_policy import give_back_soon

            give_back_soon()  # the parsed books are freed: hand their pages back
        if errors:
            self.failed.emit("\n\n".join(errors))
        window = self.parent()
        if isinstance(window, QWidget):  # heard by screen-reader users, wherever focus is
            summary = import_summary(results, errors)
            announce(window, summary, assertive=bool(errors))
            if any(r.problems for r in results) and isinstance(window, QMainWindow):
                window.statusBar().showMessage(summary, 30000)  # repaired pages: seen too
        return results

    async def _import(
        self,
        import_book: Callable[..., ImportResult],
        path: Path,
        progress: Callable[[float, str], None],
        *,
        opens: bool = False,
    ) -> ImportResult:
        """Import ``path``; a protected PDF asks for its password (again while it is wrong),
        kept in memory for the session so the page view can open it."""
        from desktop.reader import password_dialog

        password: str | None = None
        while True:
            try:
                result: ImportResult = await run_blocking(
                    import_book,
                    self.library,
                    path,
                    progress=progress,
                    cancel=self.token,
                    password=password,
                    opens=opens,
                )
            except BookError as exc:
                if exc.code not in (BookCode.PASSWORD, BookCode.WRONG_PASSWORD):
                    raise
                typed = await self.ask_password(path.name, exc.code == BookCode.WRONG_PASSWORD)
                if not typed:
                    if exc.code == BookCode.WRONG_PASSWORD:
                        raise
                    raise BookError(
                        BookCode.PASSWORD,
                        f"{path.name} was not added: it is protected by a password, "
                        "and none was given.",
                        hint="Add it again and type its password.",
                    ) from None
                password = typed
                continue
            if password:
                password_dialog.remember(result.book.sha256, password)
            return result

    async def ask_password(self, file_name: str, wrong: bool) -> str | None:
        from desktop.reader.password_dialog import ask_password

        parent = self.parent()
        return await ask_password(parent if isinstance(parent, QWidget) else None, file_name, wrong)


def import_summary(results: list[ImportResult], errors: list[str]) -> str:
    """One sentence saying how an import ended."""
    added = [r.book for r in results if not r.already_present]
    parts = []
    if len(added) == 1:
        parts.append(f"Added “{added[0].title}” to your library.")
    elif added:
        parts.append(f"Added {len(added)} books to your library.")
    if len(results) > len(added):
        parts.append(f"{len(results) - len(added)} already in your library.")
    for result in results:
        if result.problems:  # not-well-formed XHTML, read as a browser repairs it
            count = result.problems.count("; shown as") or 1
            parts.append(
                f"“{result.book.title}” had {count} damaged page file{'s' if count > 1 else ''}"
                " that Margin repaired as a web browser would."
            )
    if len(errors) == 1:
        parts.append(f"Not added: {errors[0]}")
    elif errors:
        parts.append(f"{len(errors)} files could not be added (the library says why).")
    return " ".join(parts)
