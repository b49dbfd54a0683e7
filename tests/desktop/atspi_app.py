"""The window with a book open, for the AT-SPI test: imports argv[1] into the MARGIN_HOME of
the environment, opens it at page argv[2] and runs until killed (prints "ready" once shown).
With argv[3], imports that book once the file named by $WALKED exists (the walker made it)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from core.app import Margin
from core.books.importer import import_book
from core.paths import resolve_paths


def main() -> None:
    app = QApplication(["margin"])
    app.setApplicationName("margin")
    from desktop.window.main_window import MainWindow

    margin = Margin.open(resolve_paths().ensure())
    book = import_book(margin.library, Path(sys.argv[1])).book
    window = MainWindow(margin, restore=False)
    window.show()
    window.books.refresh_library()
    window.open_book(book.id, int(sys.argv[2]))
    # a question in passages mode (no model): the transcript has a question, an answer and
    # its links for the walk to read
    margin.library.set_position(book.id, 30)
    QTimer.singleShot(300, lambda: window.chat.ask("Who is the White Rabbit?"))  # (in the loop)

    def ready() -> None:  # once the answer is written
        if window.chat.live:
            QTimer.singleShot(200, ready)
        else:
            print("ready", flush=True)

    QTimer.singleShot(500, ready)
    if len(sys.argv) > 3:  # a second book added once the tree is walked: its import is
        later = Path(sys.argv[3])  # announced (and shows the library, so not before the walk)
        walked = Path(os.environ.get("WALKED", "/nonexistent"))
        tasks = []

        def import_later(tries: int = 0) -> None:
            if walked.exists() or tries > 300:
                tasks.append(asyncio.ensure_future(window.importer.import_files([later])))
            else:
                QTimer.singleShot(200, lambda: import_later(tries + 1))

        QTimer.singleShot(500, import_later)
    asyncio.run(asyncio.Event().wait(), loop_factory=lambda: qasync.QEventLoop(app))


if __name__ == "__main__":
    main()
