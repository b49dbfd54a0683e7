"""Right-to-left page progression in the paged text view (issue 29): an EPUB whose spine
says ``page-progression-direction="rtl"``, or a book in a right-to-left language that sets
none (the W3C tests pkg-spine-progression_rtl and -default), turns forward with the Left
arrow and the left click zone, and lays its first column on the right."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.books.importer import import_book
from core.books.progression import page_progression, rtl_language
from core.store.library import Library
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from tests.core.books.epubgen import CONTAINER, chapter, paragraphs
from tests.desktop.reader.conftest import press, text_view
from tests.support.shots import save_shot


def rtl_book(path: Path, *, language: str = "en", direction: str = "rtl") -> Path:
    """Four chapters of many words; the spine's progression ``direction`` ("" for none)."""
    import zipfile

    chapters = [(f"Part {i}", paragraphs(14, seed=f"p{i}w")) for i in range(4)]
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    refs = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    spine = f' page-progression-direction="{direction}"' if direction else ""
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>Progression</dc:title><dc:language>{language}</dc:language>"
        '<dc:identifier id="id">x</dc:identifier></metadata>'
        f"<manifest>{items}</manifest><spine{spine}>{refs}</spine></package>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", opf)
        for i, (title, body) in enumerate(chapters):
            z.writestr(f"OEBPS/c{i}.xhtml", chapter(title, body))
    return path


def test_the_progression_comes_from_the_spine_else_the_language(tmp_path: Path) -> None:
    assert rtl_language("ar") and rtl_language("he-IL") and rtl_language("ku-Arab")
    assert not rtl_language("en") and not rtl_language("") and not rtl_language("ja")
    declared = rtl_book(tmp_path / "rtl.epub")
    by_language = rtl_book(tmp_path / "ar.epub", language="ar", direction="")
    ltr_arabic = rtl_book(tmp_path / "ltr.epub", language="ar", direction="ltr")
    plain = rtl_book(tmp_path / "en.epub", direction="")
    assert page_progression(declared, "epub", "en") == "rtl"
    assert page_progression(by_language, "epub", "ar") == "rtl"  # "default" in Arabic
    assert page_progression(ltr_arabic, "epub", "ar") == "ltr"  # the spine says so
    assert page_progression(plain, "epub", "en") == "ltr"
    assert page_progression(tmp_path / "gone.epub", "epub", "he") == "rtl"  # unreadable file
    assert page_progression(None, "txt", "en") == "ltr"


def open_paged(reader: Reader, library: Library, path: Path, columns: int) -> TextView:
    book = import_book(library, path).book
    reader.resize(1300, 760)
    reader.open_book(book, 1)
    reader.set_typography(replace(reader.typography, layout="paged", columns=columns))
    view = text_view(reader)
    view.setFocus()
    QApplication.processEvents()
    return view


def test_left_arrow_and_left_click_turn_forward_in_a_right_to_left_book(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    view = open_paged(reader, library, rtl_book(tmp_path / "rtl.epub"), 1)
    assert view.pager.paged and view.pager.rtl
    first = view.pager.screen_start()
    press(view, Qt.Key.Key_Left)
    second = view.pager.screen_start()
    assert second > first, "Left goes forward when pages turn right to left"
    press(view, Qt.Key.Key_Right)
    assert view.pager.screen_start() == first
    press(view, Qt.Key.Key_PageDown)  # PageDown and Space still go forward
    assert view.pager.screen_start() == second
    press(view, Qt.Key.Key_PageUp)
    middle_y = view.viewport().height() // 2
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(5, middle_y))
    assert view.pager.screen_start() == second, "the left click zone goes forward"
    right = QPoint(view.viewport().width() - 5, middle_y)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=right)
    assert view.pager.screen_start() == first


def test_two_columns_are_laid_right_to_left(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    view = open_paged(
        reader, library, rtl_book(tmp_path / "ar.epub", language="ar", direction=""), 2
    )
    assert view.pager.rtl and view.pager.column_count() == 2 and len(view.pager.columns) == 2
    width = view.pager.column_width()
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.pager.columns[0].first)
    assert view.cursorRect(cursor).x() >= width, "the screen's first column is on the right"
    cursor.setPosition(view.pager.columns[1].first)
    assert view.cursorRect(cursor).x() < width, "its second column is on the left"
    # a click in the right half lands in the first column's text, the left half in the second
    y = int(view.cursorRect(cursor).center().y())
    assert (
        view.pager.columns[0].first
        <= view.pager.cursor_at(QPoint(width + 60, y)).position()
        < view.pager.columns[0].end
    )
    assert (
        view.pager.columns[1].first
        <= view.pager.cursor_at(QPoint(60, y)).position()
        < view.pager.columns[1].end
    )
    for theme in ("light", "dark"):
        reader.set_theme(theme)
        QApplication.processEvents()
        save_shot(reader.grab(), f"rtl-two-columns-{theme}.png")
    before = view.pager.screen_start()
    press(view, Qt.Key.Key_Left)
    assert view.pager.screen_start() > before


def test_a_left_to_right_book_keeps_right_as_forward(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    view = open_paged(reader, library, rtl_book(tmp_path / "en.epub", direction=""), 2)
    assert not view.pager.rtl
    first = view.pager.screen_start()
    press(view, Qt.Key.Key_Left)
    assert view.pager.screen_start() == first  # nothing before the first screen
    press(view, Qt.Key.Key_Right)
    assert view.pager.screen_start() > first
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.pager.columns[0].first)
    assert view.cursorRect(cursor).x() < view.pager.column_width()
