"""Issue 46 item 10: a 14,400 x 14,400 pt PDF page (the format's largest) took 1.49 GB in the
reader; it is drawn within ``PAGE_PIXELS`` and scaled to its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.pdf_view import PAGE_PIXELS, PdfView
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.resize(1100, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    close_window(qtbot, win)


def test_the_largest_pdf_page_is_drawn_within_the_pixel_budget(
    window: Any, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    pdf = pdfium.PdfDocument.new()
    pdf.new_page(14400, 14400)
    path = tmp_path / "huge.pdf"
    pdf.save(path)
    pdf.close()
    book = import_book(library, path).book
    window.open_book(book.id, 1)
    view = window.reader.view
    assert isinstance(view, PdfView)
    view.settle()
    for _ in range(3):
        view.zoom_in()  # zoomed in: the page is wider than the screen
    qtbot.waitUntil(lambda: view.image_for(view.current - 1) is not None, timeout=20000)
    image = view.image_for(view.current - 1)
    assert image is not None
    rect = view.rects[view.current - 1]
    assert rect.width() * rect.height() > PAGE_PIXELS  # its place on screen is larger…
    assert image.width() * image.height() <= PAGE_PIXELS  # …than what was drawn
    held = sum(i.sizeInBytes() for i in view.cache.values())
    assert held < 200 * 1024 * 1024
