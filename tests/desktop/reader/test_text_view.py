"""The text view (text_view.py, text_flow.py, text_marks.py) driven by real key presses:
continuous reading without skipped text, chapter edges, marks in view, images."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.store.library import Library
from desktop.reader.picture_text import MARK, SIZE
from desktop.reader.reader import Reader
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import (
    alice_window,
    chapter_pages,
    press,
    text_view,
    visible_offsets,
)


@pytest.mark.parametrize("key", [Qt.Key.Key_PageDown, Qt.Key.Key_Space, Qt.Key.Key_Right])
def test_turning_screens_through_a_chapter_skips_no_text(
    reader: Reader, library: Library, books_dir: Path, key: Qt.Key
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    pages = chapter_pages(library, book.id, 20)
    reader.open_book(book, pages[0])
    view = text_view(reader)
    view.setFocus()
    covered: dict[int, list[tuple[int, int]]] = {p: [] for p in pages}
    lengths: dict[int, int] = {}
    seen_pages = []
    for _ in range(400):
        for page, a, b in visible_offsets(view):
            if page in covered:
                covered[page].append((a, b))
                lengths[page] = len(view.flow.page_text(page))
        seen_pages.append(reader.page)
        if reader.page > pages[-1]:
            break
        press(view, Qt.Key.Key_PageDown)
    assert reader.page == pages[-1] + 1, "reading went on into the next chapter"
    assert seen_pages == sorted(seen_pages), "the page indicator only moved forward"
    for page in pages:
        text = view.flow.page_text(page) if page in view.flow.loaded else None
        reach = 0
        for a, b in sorted(covered[page]):
            assert a <= reach + 1, f"text skipped on p. {page} at offset {reach}..{a}: {text!r}"
            reach = max(reach, b)
        assert reach >= lengths[page] - 1, f"the end of p. {page} was never on screen"


def test_every_paragraph_of_a_chapter_is_on_screen_at_some_point(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "metamorphosis.epub").book
    pages = chapter_pages(library, book.id, 3)
    reader.open_book(book, pages[0])
    view = text_view(reader)
    paragraphs = [
        " ".join(p.split())
        for page in pages
        for p in library.page(book.id, page).text.split("\n\n")
        if p.strip()
    ]
    seen = ""
    for _ in range(600):
        first, last = view.visible_range()
        cursor = QTextCursor(view.document())
        cursor.setPosition(first)
        cursor.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
        seen += " " + " ".join(cursor.selectedText().replace("\u2029", " ").split())
        bar = view.verticalScrollBar()
        if reader.page > pages[-1] or bar.value() >= bar.maximum():
            break
        press(view, Qt.Key.Key_PageDown)
    missing = [p[:60] for p in paragraphs if p[:40] not in seen or p[-40:] not in seen]
    assert not missing, f"paragraphs never shown: {missing[:3]}"


def test_page_up_and_home_end_go_back_and_to_the_chapter_edges(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    pages = chapter_pages(library, book.id, 20)
    reader.open_book(book, pages[1])
    view = text_view(reader)
    start = view.top_position()
    press(view, Qt.Key.Key_PageDown)
    press(view, Qt.Key.Key_PageDown)
    press(view, Qt.Key.Key_PageUp)
    press(view, Qt.Key.Key_Space, Qt.KeyboardModifier.ShiftModifier)
    assert abs(view.top_position()[1] - start[1]) < 80 and view.top_position()[0] == start[0]
    press(view, Qt.Key.Key_Home)
    assert reader.page == pages[0] and view.verticalScrollBar().value() <= view.flow.y_of(
        view.flow.starts[view.flow.loaded.index(pages[0])]
    )
    press(view, Qt.Key.Key_End)
    last_text = library.page(book.id, pages[-1]).text.split()[-3:]
    first, last = view.visible_range()
    cursor = QTextCursor(view.document())
    cursor.setPosition(first)
    cursor.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
    assert " ".join(last_text) in " ".join(cursor.selectedText().replace("\u2029", " ").split())


def test_window_page_down_turns_a_screen_when_the_book_has_focus(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with alice_window(library, books_dir, qtbot, 10) as (win, _book):
        view = text_view(win.reader)
        view.setFocus()
        assert view.pager.paged
        end = view.flow.page_offset(min(view.pager.columns[-1].end, view.flow.end_position()))
        press(view, Qt.Key.Key_PageDown)
        assert view.top_position() == end, "one screen on: where the last one stopped"


def test_a_citation_jump_shows_the_mark_inside_the_viewport(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 2)
    view = text_view(reader)
    for page in (12, 39, 77):
        quote = " ".join(library.page(book.id, page).text.split()[-12:-4])  # near the bottom
        reader.go_to_page(page, mark=quote)
        QApplication.processEvents()
        assert reader.page == page
        assert view.marks.marked() and view.mark_visible(), f"the mark on p. {page} is out of view"


def test_a_mark_whose_words_are_on_the_next_page_opens_that_page(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 2)
    view = text_view(reader)
    quote = " ".join(library.page(book.id, 31).text.split()[40:47])
    reader.go_to_page(30, mark=quote)  # a hit that says p. 30 for words on p. 31
    # the mark is centred: the top of the view may still show the end of p. 30
    assert reader.page in (30, 31) and view.mark_visible()
    start = view.marks.mark_position()
    assert start is not None and view.flow.page_offset(start[0])[0] == 31


def test_large_images_fit_the_column(reader: Reader, library: Library, tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    image = QImage(3000, 1000, QImage.Format.Format_RGB32)
    image.fill(0x3366AA)
    data = bytearray()
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    raw = QByteArray()
    buffer = QBuffer(raw)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    data.extend(bytes(raw.data()))
    path = make_epub(
        tmp_path / "img.epub",
        [("Pictures", '<p>Before.</p><p><img src="wide.png" alt="wide"/></p><p>After.</p>')],
        extra_files={"OEBPS/wide.png": bytes(data)},
        extra_manifest='<item id="img" href="wide.png" media-type="image/png"/>',
    )
    book = import_book(library, path).book
    reader.open_book(book, 1)
    view = text_view(reader)
    QApplication.processEvents()
    assert view.horizontalScrollBar().maximum() == 0
    assert view.document().size().width() <= view.viewport().width() + 1
    mark = view.document().find(MARK)  # the picture, painted on its line (picture_text)
    width, height, *_ = mark.charFormat().property(SIZE)
    assert 0 < width <= view.viewport().width() and height == pytest.approx(width / 3, abs=1)


def test_the_mark_stays_in_view_when_the_window_is_resized_after_the_jump(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 2)
    quote = " ".join(library.page(book.id, 39).text.split()[-14:-6])
    reader.go_to_page(39, mark=quote)
    view = text_view(reader)
    for width, height in ((600, 500), (1400, 900), (800, 400)):
        reader.resize(width, height)
        QApplication.processEvents()
        assert view.mark_visible(), f"mark out of view at {width}×{height}"
    press(view, Qt.Key.Key_PageDown)  # once the reader moves on, the place is kept instead
    here = view.top_position()
    reader.resize(1000, 700)
    QApplication.processEvents()
    assert view.top_position()[0] == here[0]


def test_double_click_on_an_image_opens_it_large(
    reader: Reader, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage

    image = QImage(1600, 900, QImage.Format.Format_RGB32)
    image.fill(0x884422)
    raw = QByteArray()
    buffer = QBuffer(raw)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    path = make_epub(
        tmp_path / "pic.epub",
        [("Pictures", '<p><img src="big.png" alt="big"/></p><p>After the picture.</p>')],
        extra_files={"OEBPS/big.png": bytes(raw.data())},
        extra_manifest='<item id="img" href="big.png" media-type="image/png"/>',
    )
    book = import_book(library, path).book
    reader.open_book(book, 1)
    view = text_view(reader)
    cursor = QTextCursor(view.document())
    cursor = view.document().find(MARK)  # the picture's line (picture_text)
    assert not cursor.isNull()
    found = view.cursorRect(cursor)
    shown: list[str] = []
    view.imageOpened.connect(shown.append)
    QTest.mouseDClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=found.center() + QPoint(0, 60)
    )
    assert shown and shown[0].endswith("big.png")
    dialogs = [w for w in QApplication.topLevelWidgets() if w.windowTitle() == "Image"]
    assert dialogs and dialogs[-1].isVisible()
    dialogs[-1].close()
