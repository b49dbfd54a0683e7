"""The reader (reader.py) wiring the session to the views: jumps never raise read_to,
Read to here, Back/Forward, remembered zoom, the same words at the top when reopened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.pdf_view import PdfView
from desktop.reader.reader import Reader
from tests.desktop.reader.conftest import alice_window, press, text_view
from tests.support.pdfgen import make_text_pdf


def test_jumps_never_raise_read_to_but_reading_on_through_pages_does(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.go_to_page(30)  # Go to page
    reader.toc.setCurrentItem(reader.toc.topLevelItem(5))
    reader.side.contents.go(reader.toc.topLevelItem(5))  # a contents entry
    reader.find_box.setText("Cheshire")
    reader.run_find()
    reader.side.finder.step(1)  # a Find result
    reader.go_to_page(60, mark="Cheshire")  # a citation chip
    reader.go_back()
    reader.save_position()
    assert library.get_book(book.id).read_to == 1
    reader.go_to_page(1)  # where reading stopped
    view = text_view(reader)
    while reader.page < 23:
        press(view, Qt.Key.Key_PageDown)
    reader.save_position()
    saved = library.get_book(book.id)
    assert saved.page == 23 and saved.read_to == 23
    press(view, Qt.Key.Key_PageUp)
    press(view, Qt.Key.Key_PageUp)
    reader.go_to_page(2)
    reader.save_position()
    assert library.get_book(book.id).read_to == 23, "going back never lowers it"


def test_i_have_read_up_to_here_sets_the_bound(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 40)
    press(
        text_view(reader),
        Qt.Key.Key_R,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert library.get_book(book.id).read_to == 40
    reader.go_to_page(12)
    reader.read_to_button.click()
    assert library.get_book(book.id).read_to == 12


def test_back_and_forward_return_to_where_the_reader_was(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 5)
    view = text_view(reader)
    press(view, Qt.Key.Key_PageDown)
    here, here_page = view.top_position(), reader.page
    assert not reader.back_button.isEnabled()
    reader.go_to_page(50, mark="Cheshire")  # a citation
    assert reader.page >= 50 and reader.back_button.isEnabled()
    press(view, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    back = view.top_position()
    # back where the reader was, to the line (the layout may settle a line differently)
    assert back[0] == here[0] and abs(back[1] - here[1]) < 250 and reader.page == here_page
    assert reader.forward_button.isEnabled()
    press(view, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert reader.page >= 50
    reader.back_button.click()
    assert reader.page == here_page
    reader.go_to_page(70)  # a new jump clears Forward
    assert not reader.forward_button.isEnabled()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.BackButton)
    assert reader.page == here_page


def test_font_size_and_pdf_zoom_are_remembered_across_launches(
    library: Library, books_dir: Path, pdf_dir: Path, qtbot: Any, real_font: str
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    pdf = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    first = Reader(library)
    qtbot.addWidget(first)
    first.resize(900, 700)
    first.show()
    first.open_book(book, 20)
    view = text_view(first)
    press(view, Qt.Key.Key_PageDown)
    place = view.top_position()
    start = first.font_size
    first.zoom_in()
    first.zoom_in()
    assert first.font_size == start + 2
    after = view.top_position()
    assert after[0] == place[0] and abs(after[1] - place[1]) < 120, "the place is kept"
    first.set_theme("dark")
    assert view.top_position()[0] == place[0]
    first.open_book(pdf, 1)
    assert isinstance(first.view, PdfView)
    first.view.set_scale(2.5)
    first.close_book()
    first.settings.sync()
    assert first.settings.value("font_size") is None, "the size's one home is settings.toml"
    second = Reader(library)
    qtbot.addWidget(second)
    second.open_book(pdf, 1)
    assert isinstance(second.view, PdfView) and abs(second.view.scale - 2.5) < 0.01
    assert str(library.paths.config) in second.settings.fileName()


def test_back_after_a_citation_from_the_chat_returns_in_one_step(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from desktop.requests import OpenPageRequest

    with alice_window(library, books_dir, qtbot, 12) as (win, book):
        view = text_view(win.reader)
        press(view, Qt.Key.Key_PageDown)
        here = view.top_position()
        quote = " ".join(library.page(book.id, 39).text.split()[-14:-6])
        win.open_page_request(OpenPageRequest(book.id, 39, quote))
        QApplication.processEvents()
        assert win.reader.page == 39 and view.mark_visible()
        press(view, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
        assert view.top_position() == here
        assert not win.reader.back_button.isEnabled(), "nothing half-way in the history"


@pytest.mark.parametrize("kind", ["epub", "pdf"])
def test_reopening_a_book_shows_the_same_words_at_the_top(
    library: Library, books_dir: Path, tmp_path: Path, qtbot: Any, real_font: str, kind: str
) -> None:
    if kind == "epub":
        book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    else:
        texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 8)]
        book = import_book(library, make_text_pdf(tmp_path / "r.pdf", texts)).book
    first = Reader(library)
    qtbot.addWidget(first)
    first.resize(900, 700)
    first.show()
    first.open_book(book, 3)
    assert first.view is not None
    press(first.view, Qt.Key.Key_PageDown)
    here = first.position()
    assert here[1] > 0
    first.save_position()
    first.close_book()
    second = Reader(library)
    qtbot.addWidget(second)
    second.resize(900, 700)
    second.show()
    second.open_book(library.get_book(book.id))
    assert second.position() == here


def test_back_after_looking_ahead_returns_where_reading_stopped_and_reading_counts_again(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 30)
    reader.open_book(library.get_book(book.id))
    view = text_view(reader)
    reader.go_to_page(70, mark="Alice")  # a citation past the bound
    press(view, Qt.Key.Key_PageDown)
    press(view, Qt.Key.Key_PageDown)
    press(view, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # Back
    assert reader.page == 30 and "Looking ahead" not in reader.footer.plain_text()
    while reader.page < 31:
        press(view, Qt.Key.Key_PageDown)
    reader.save_position()
    assert library.get_book(book.id).read_to == 31
