"""The window's book actions: import (dialog, drop, command line), remove, read again, go to
page, export highlights, the welcome guide, and the work after start-up (tidy up after a
crash, offer to add back lost books)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QLabel

from core.errors import MarginError
from desktop.library.book_files import BOOK_FILTER
from desktop.library.book_files import BOOK_SUFFIXES as SUFFIXES
from desktop.resources import resources_dir
from desktop.tasks import in_background, run_blocking

if TYPE_CHECKING:
    from core.store.book_info import BookInfo
    from desktop.window.main_window import MainWindow

WELCOME = "Welcome to Margin.md"


class BookActions:
    """What the window does with books. The window owns one (``window.books``)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self._listing = 0  # the newest list of books asked for

    def refresh_library(self) -> None:
        """Show the library's books (listed on a worker thread: 10–30 ms for 500 books)."""
        self._listing += 1
        listing = self._listing

        def show(books: list[BookInfo]) -> None:
            if listing == self._listing and shiboken6.isValid(self.window.library_panel):
                current = self.window.panels.book_id()
                self.window.library_panel.set_books(books, current)
                self.window.libraryListed.emit()

        shelf = getattr(self.window, "_shelf", None)
        self.window._shelf = None
        if shelf is not None:  # the first listing, read before the library's code loaded
            show(shelf)
            return
        in_background(self.window.library.list_books, then=show)

    def choose_files(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        files, _ = QFileDialog.getOpenFileNames(
            self.window, "Add books", str(Path.home()), BOOK_FILTER
        )
        if files:
            self.import_files([Path(f) for f in files])

    def import_files(self, paths: list[Path], *, open_first: bool = True) -> None:
        async def go() -> None:
            results = await self.window.importer.import_files(paths, open_first=open_first)
            self.refresh_library()
            if results and open_first:
                self.window.open_book(results[0].book.id)
                await self.prepare_when_drawn()

        self.window.tasks.start(go(), key="import", replace=False)

    async def import_and_open(self, path: Path, page: int | None = None) -> BookInfo | None:
        """Import ``path`` if needed and open it (``Margin book.epub`` from a file manager)."""
        results = await self.window.importer.import_files([path], open_first=True)
        self.refresh_library()
        if not results:
            error = self.window.library_panel.error.text() or f"{path.name} could not be opened."
            raise MarginError("import_failed", error)
        book = self.window.open_book(results[0].book.id, page)
        self.window.tasks.start(self.prepare_when_drawn(), key="prepare")
        return book

    async def prepare_when_drawn(self) -> None:
        """The spoiler check's counts of the books just added, once the page is drawn (they
        take seconds of CPU for a big book: the first page comes first)."""
        try:
            await self.window.reader.wait_drawn(limit=15.0)
        except TimeoutError:
            pass
        importer = self.window.importer
        if shiboken6.isValid(importer):  # the window may have closed meanwhile
            importer.prepare_soon()

    def remove_book(self, book_id: int) -> None:
        from PySide6.QtWidgets import QMessageBox

        try:
            book = self.window.library.get_book(book_id)
        except MarginError:
            return
        answer = QMessageBox.question(
            self.window,
            "Remove book",
            f"Remove “{book.title}” from your library, with its highlights, notes and conversations?\n\nThe original file is not touched.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        if self.window.reader.book is not None and self.window.reader.book.id == book_id:
            self.window.reader.close_book()  # BookClosed: the chat, threads and notes let go
            self.window.setWindowTitle("Margin")
            self.window.back_to_book.hide()
            self.window.panes.show_library()
        chat = self.window.chat
        if not isinstance(chat, QLabel) and chat.answering(book_id=book_id):

            async def stop_then_delete() -> None:
                # its answers stop first and save what they wrote; then the book goes
                await chat.stop_answers(book_id=book_id)
                await self._delete_book(book_id, book.title)

            self.window.tasks.start(stop_then_delete(), key=f"remove:{book_id}")
            return
        self.window.tasks.start(self._delete_book(book_id, book.title), key=f"remove:{book_id}")

    async def _delete_book(self, book_id: int, title: str) -> None:
        # off the UI thread: taking a big book out of the search index takes seconds
        # (about 5 s for a 16 MiB EPUB), and the window must keep answering meanwhile
        self.window.statusBar().showMessage(f"Removing “{title}”…")
        try:
            await run_blocking(self.window.library.delete_book, book_id)
        except MarginError:
            pass  # removed meanwhile (another window, the CLI)
        self.window.statusBar().showMessage(f"“{title}” was removed from your library.", 5000)
        self.refresh_library()

    def reread_current(self) -> None:
        """Read the open book again with today's readers (off the UI thread), then show it
        at the same page."""
        book = self.window.reader.book
        if book is None:
            return

        async def go() -> None:
            from core.books.importer import reimport_book
            from desktop.reader.password_dialog import known

            self.window.statusBar().showMessage(f"Reading “{book.title}” again…")
            try:
                updated = await run_blocking(
                    reimport_book, self.window.library, book.id, password=known(book.sha256)
                )
            except MarginError as exc:
                self.window.statusBar().showMessage(str(exc), 10000)
                return
            self.window.reader.close_book(reopening=True)
            self.window.open_book(updated.id, updated.page)
            self.window.statusBar().showMessage(f"“{updated.title}” was read again.", 5000)
            from desktop.highlights.threads_panel import show_lost

            show_lost(
                self.window,
                updated.title,
                await run_blocking(self.window.library.lost_anchors, book.id),
            )

        self.window.tasks.start(go(), key="reread")

    def repair_index(self) -> None:
        from desktop.library.repair import repair_search_index

        repair_search_index(self.window)

    def remove_current(self) -> None:
        if self.window.reader.book is not None:
            self.remove_book(self.window.reader.book.id)

    def go_to_page_dialog(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        if self.window.reader.book is None:
            return
        labels, count = self.window.reader.labels, self.window.reader.book.page_count
        if not any(label != str(n) for n, label in enumerate(labels.labels, 1)):
            page, ok = QInputDialog.getInt(
                self.window,
                "Go to page",
                "Page:",
                self.window.reader.page,
                1,
                self.window.reader.book.page_count,
            )
            if ok:
                self.window.reader.go_to_page(page)
            return
        # a book with printed page numbers: "40" is Margin's page, "p. 40" the printed one
        text, ok = QInputDialog.getText(
            self.window,
            "Go to page",
            f"Page (1–{count}), or a printed page as in the paper book (p. 40):",
            text=str(self.window.reader.page),
        )
        if not ok:
            return
        target = labels.find(text, count)
        if target is None:
            self.window.statusBar().showMessage(f"This book has no page {text.strip()!r}.", 4000)
            return
        self.window.reader.go_to_page(target)

    def export_highlights(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        from core.export.markdown import export_file_name, export_highlights

        book = self.window.reader.book
        if book is None:
            self.window.statusBar().showMessage("Open a book first.", 3000)
            return
        name, _ = QFileDialog.getSaveFileName(
            self.window,
            "Export highlights",
            str(Path.home() / export_file_name(book.title, "highlights")),
            "Markdown (*.md)",
        )
        if name:
            export_highlights(self.window.library, book.id, Path(name))
            self.window.statusBar().showMessage(f"Highlights saved to {name}", 4000)

    def open_welcome(self) -> None:
        for book in self.window.library.list_books():
            if book.original_path.endswith(WELCOME):
                self.window.open_book(book.id)
                return
        self.import_files([self.welcome_path()])

    @staticmethod
    def welcome_path() -> Path:
        return resources_dir() / "welcome" / WELCOME

    def start_background_work(self) -> None:
        """After the window is visible: tidy up after a crash, import the welcome guide on
        first run, and warm the model SDK so the first question does not wait for it."""

        async def go() -> None:
            from core.books.importer import recover_incomplete

            await run_blocking(recover_incomplete, self.window.library)
            if hasattr(self.window.chat, "recover"):
                await run_blocking(self.window.chat.recover)
            copies = await run_blocking(self.window.app.unlisted_copies)
            if copies:
                await self.offer_recovery(len(copies))
            elif not self.window.library.list_books() and not self.window.preferences.welcomed():
                self.window.preferences.set_welcomed()
                results = await self.window.importer.import_files([self.welcome_path()])
                self.refresh_library()
                if results and self.window.reader.book is None:
                    self.window.open_book(results[0].book.id)
            if hasattr(self.window.chat, "warm_up"):
                await self.window.chat.warm_up()

        self.window.tasks.start(go(), key="startup")

    async def offer_recovery(self, count: int) -> None:
        """The books folder holds copies no book names (the library database was lost or
        replaced): say so, and add them back when the reader agrees."""
        from PySide6.QtWidgets import QMessageBox

        books = "1 book" if count == 1 else f"{count} books"
        answer = QMessageBox.question(
            self.window,
            "Books found",
            f"Margin found copies of {books} in its books folder that its library does not "
            "list (the library file was probably lost or replaced).\n\n"
            "Add them back to your library? Nothing is deleted either way.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            self.window.statusBar().showMessage(
                "Book copies kept; 'margin recover-library' adds them back any time.", 8000
            )
            return
        self.window.statusBar().showMessage(f"Adding back {books}…")
        recovered = await run_blocking(self.window.app.recover_library)
        self.refresh_library()
        failed = [r for r in recovered if r.error is not None]
        added = len(recovered) - len(failed)
        text = f"Added back {added} of {len(recovered)} books."
        if failed:
            text += " " + "; ".join(f"{r.path.name}: {r.error.message}" for r in failed[:3])
        self.window.statusBar().showMessage(text, 15000)

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(
            Path(u.toLocalFile()).suffix.lower() in SUFFIXES for u in event.mimeData().urls()
        ):
            event.acceptProposedAction()

    def drop(self, event: QDropEvent) -> None:
        files = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        files = [f for f in files if f.suffix.lower() in SUFFIXES]
        if files:
            event.acceptProposedAction()
            self.import_files(files)
