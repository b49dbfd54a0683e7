"""Issue 46 item 10: a comic of large pictures decodes one large picture at a time, and its
decoders stop before the window goes (closing while a page decoded crashed, 3 of 3)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader import image_pages
from desktop.reader.image_pages import ImagePagesView
from tests.desktop.conftest import open_window
from tests.support.comics import png

SIDE = 5000  # 25 megapixels: over BIG_PIXELS


def test_closing_the_window_while_large_pictures_decode(
    app: Any, qtbot: Any, real_font: str, library: Library, tmp_path: Path
) -> None:
    assert SIDE * SIDE > image_pages.BIG_PIXELS
    picture = png(SIDE, SIDE, (200, 40, 40))
    path = tmp_path / "big.cbz"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(6):
            zf.writestr(f"pages/page{i + 1}.png", picture)
    assert path.stat().st_size < 3_000_000
    book = import_book(library, path).book
    window = open_window(app, qtbot, (900, 900))
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, ImagePagesView)
    for _ in range(4):  # turn on: several pictures are decoding
        QTest.keyClick(view, Qt.Key.Key_Right)
    window.close()  # while they decode
    assert view.stopped.is_set()
    assert view.pool.activeThreadCount() == 0  # stopped before the window went
