"""Run in a subprocess under Xvfb by test_screenshot.py: open a book, follow a citation to a
passage near the bottom of a page, and save a screenshot of the real screen. Prints one JSON
line: whether the mark is in view and where it is on the screen."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(out: Path, book_file: Path, page: int) -> int:
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from desktop.reader.text_view import TextView
    from desktop.requests import OpenPageRequest
    from desktop.window.main_window import MainWindow

    margin = Margin.open(resolve_paths().ensure())
    library = margin.library
    book = import_book(library, book_file).book
    window = MainWindow(margin, restore=False)
    window.resize(1200, 800)
    window.show()
    window.open_book(book.id, 2)
    quote = " ".join(library.page(book.id, page).text.split()[-14:-6])
    window.open_page_request(OpenPageRequest(book.id, page, quote))
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    view = window.reader.view
    assert isinstance(view, TextView)
    mark = view.marks.mark_position()
    result: dict[str, object] = {
        "page": window.reader.page,
        "visible": view.mark_visible(),
        "quote": quote,
    }
    if mark is not None:
        from PySide6.QtGui import QTextCursor

        cursor = QTextCursor(view.document())
        cursor.setPosition(mark[0] + 1)
        rect = view.cursorRect(cursor)
        centre = view.viewport().mapToGlobal(QPoint(rect.right() + 3, rect.center().y()))
        result["mark_screen"] = [centre.x(), centre.y()]
    screen = app.primaryScreen()
    shot = screen.grabWindow(0)
    shot.save(str(out))
    result["screen"] = [shot.width(), shot.height()]
    print(json.dumps(result))
    window.close()
    library.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
