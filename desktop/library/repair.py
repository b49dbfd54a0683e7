"""Book › Repair search index: rebuild the index (and re-read damaged book text from the
copies) off the UI thread, then say what was done. Notes, highlights, conversations and
positions are never touched (``core.books.repair``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

from core.errors import MarginError
from desktop.tasks import run_blocking

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow

log = logging.getLogger(__name__)
TITLE = "Repair search index"


def repair_search_index(window: MainWindow) -> None:
    """Start the repair for ``window`` (a ``MainWindow``: its ``library``, ``tasks`` and
    status bar); a message box reports the result."""

    async def go() -> None:
        from core.books.repair import repair_library

        window.statusBar().showMessage("Repairing the search index…")
        try:
            report = await run_blocking(repair_library, window.library, None)
        except MarginError as exc:
            window.statusBar().clearMessage()
            QMessageBox.warning(window, TITLE, str(exc))
            return
        window.statusBar().showMessage(report.summary(), 8000)
        if report.reread or report.failed or not report.index_complete:
            QMessageBox.information(window, TITLE, report.summary())

    window.tasks.start(go(), key="repair_index")


READ_ONLY = (
    "This library's folder is read-only, so Margin has opened it for reading: your books, "
    "notes and conversations are all here, but nothing new can be saved (no imports, notes, "
    "highlights, reading positions or questions). Make the folder writable, or start Margin "
    "with another folder (--data-dir), to change anything."
)


def show_read_only_notice(window: MainWindow) -> QMessageBox:
    """Say once, in the window, that the library opened for reading only (not modal: the
    reader can read on)."""
    box = QMessageBox(QMessageBox.Icon.Information, "Read-only library", READ_ONLY, parent=window)
    box.setObjectName("read_only_notice")
    box.open()
    window.statusBar().showMessage("Read-only library: nothing can be saved.")
    return box
