"""The library view with real widgets, real books and real covers (offscreen)."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit

from core.books.covers import cover_colour, cover_file, epub_cover_bytes
from core.books.importer import import_book
from core.store.library import BookInfo, Library
from desktop.library.covers import (
    COVER_SIZE,
    CoverJob,
    cached_cover,
    decode_image,
    fit_cover,
    generated_cover,
)
from desktop.library.view import BOOK_ID, LibraryView, cover_job


def mean_diff(a: QImage, b: QImage) -> float:
    """Mean absolute difference per channel, sampled on a grid (0 = identical, 255 = opposite)."""
    a = a.convertToFormat(QImage.Format.Format_RGB32)
    b = b.scaled(a.size()).convertToFormat(QImage.Format.Format_RGB32)
    total = 0
    count = 0
    for y in range(0, a.height(), 3):
        for x in range(0, a.width(), 3):
            p, q = a.pixelColor(x, y), b.pixelColor(x, y)
            total += abs(p.red() - q.red()) + abs(p.green() - q.green()) + abs(p.blue() - q.blue())
            count += 3
    return total / count


def mean_colour(image: QImage) -> QColor:
    return image.scaled(1, 1, mode=Qt.TransformationMode.SmoothTransformation).pixelColor(0, 0)


def make_book(book_id: int, title: str, author: str, **kw: Any) -> BookInfo:
    base = dt.datetime(2026, 1, 1)
    fields: dict[str, Any] = {
        "id": book_id,
        "title": title,
        "author": author,
        "language": "en",
        "format": "txt",
        "sha256": f"{book_id:064x}",
        "original_path": f"/books/{title}.txt",
        "file_path": f"/books/{title}.txt",
        "file_size": 100,
        "page_count": 101,
        "page": 1,
        "read_to": 1,
        "finished": False,
        "status": "ready",
        "added_at": base + dt.timedelta(days=book_id),
        "opened_at": None,
    }
    fields.update(kw)
    return BookInfo(**fields)


@pytest.fixture
def view(library: Library, qtbot: Any, real_font: str) -> Any:
    widget = LibraryView(library.paths.data)
    qtbot.addWidget(widget)
    widget.resize(480, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.covers.close()


def shelf() -> list[BookInfo]:
    return [
        make_book(1, "Emma", "Jane Austen", opened_at=dt.datetime(2026, 3, 1)),
        make_book(2, "Dracula", "Bram Stoker", read_to=51),
        make_book(3, "Walden", "Henry David Thoreau", finished=True),
        make_book(4, "Persuasion", "Jane Austen", opened_at=dt.datetime(2026, 2, 1)),
        make_book(5, "anonymous pamphlet", ""),
    ]


def test_grid_shows_real_covers_for_epub_pdf_and_text(
    view: Any, library: Library, books_dir: Path, pdf_dir: Path, qtbot: Any
) -> None:
    epub = import_book(library, books_dir / "alice_in_wonderland.epub").book
    pdf = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    text = import_book(library, books_dir / "metamorphosis.txt").book
    view.set_books(library.list_books())
    first = view.view.grab().toImage()  # painted before any cover arrived: placeholders
    qtbot.waitUntil(
        lambda: all(view.covers.has(b.sha256) for b in (epub, pdf, text)), timeout=20000
    )
    for book in (epub, pdf, text):
        assert cover_file(library.paths.data, book.sha256).exists(), "cached in <data>/covers"
    # EPUB: the book's own cover picture (a beige drawing), not a generated one
    own = fit_cover(decode_image(epub_cover_bytes(Path(epub.file_path)) or b"") or QImage())
    cached_epub = QImage(str(cover_file(library.paths.data, epub.sha256)))
    assert cached_epub.size() == COVER_SIZE
    assert mean_diff(cached_epub, own) < 6
    assert mean_diff(cached_epub, generated_cover(epub.title, epub.author)) > 30
    # PDF: its first page, small: white paper with dark print on it
    page = QImage(str(cover_file(library.paths.data, pdf.sha256)))
    assert mean_colour(page).lightness() > 200
    dark = sum(
        1
        for y in range(0, page.height(), 2)
        for x in range(0, page.width(), 2)
        if page.pixelColor(x, y).lightness() < 220
    )
    assert dark > 200, "the page's text shows (grey at this size)"
    # text: a generated cover in the title's colour
    generated = QImage(str(cover_file(library.paths.data, text.sha256)))
    assert mean_diff(generated, generated_cover(text.title, text.author)) < 2
    corner = generated.pixelColor(COVER_SIZE.width() // 2, 4)
    expected = QColor(*cover_colour(text.title))
    assert abs(corner.hue() - expected.hue()) <= 12 or expected.saturation() < 20
    # the view painted placeholders first, then the covers
    view.view.viewport().repaint()
    after = view.view.grab().toImage()
    rect = view.view.visualRect(view.model.index(view.model.row_of(epub.id), 0))
    pad = 8
    cover_rect = rect.adjusted(pad, pad, -pad, 0)
    cover_rect.setHeight(round(cover_rect.width() * 1.5))
    before_tile = first.copy(cover_rect)
    after_tile = after.copy(cover_rect)
    placeholder = QColor(*cover_colour(epub.title))
    centre = before_tile.pixelColor(before_tile.width() // 2, before_tile.height() // 2)
    assert centre == placeholder
    assert mean_diff(after_tile, own) < 20, "the grid shows the EPUB's own cover"


def test_broken_cover_sources_fall_back_to_a_generated_cover(tmp_path: Path) -> None:
    fake_pdf = tmp_path / "fake.pdf"
    fake_pdf.write_bytes(b"%PDF-1.4 not really")
    broken = tmp_path / "broken.epub"
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("META-INF/container.xml", "<not xml")
    bad_image = tmp_path / "badimage.epub"
    from tests.core.books.epubgen import make_epub

    make_epub(
        bad_image,
        [("One", "<p>x</p>")],
        extra_manifest='<item id="c" href="c.png" media-type="image/png" properties="cover-image"/>',
        extra_files={"OEBPS/c.png": b"\x89PNG\r\n\x1a\n garbage"},
    )
    for fmt, path in (("pdf", fake_pdf), ("epub", broken), ("epub", bad_image)):
        job = CoverJob("a" * 64, fmt, str(path), "Fallback Title", "Someone")
        image = cached_cover(tmp_path / "data", job)
        assert mean_diff(image, generated_cover("Fallback Title", "Someone")) < 2
    # an unreadable cached file is made again
    target = cover_file(tmp_path / "data", "a" * 64)
    target.write_bytes(b"not a png")
    job = CoverJob("a" * 64, "txt", "", "Fallback Title", "Someone")
    assert not cached_cover(tmp_path / "data", job).isNull()
    assert not QImage(str(target)).isNull()


def test_huge_cover_images_are_refused(tmp_path: Path) -> None:
    big = QImage(9000, 9000, QImage.Format.Format_RGB32)  # 81 MP, over the limit
    big.fill(QColor("red"))
    path = tmp_path / "big.png"
    assert big.save(str(path))
    assert decode_image(path.read_bytes()) is None
    small = QImage(600, 900, QImage.Format.Format_RGB32)
    small.fill(QColor("blue"))
    small.save(str(path))
    decoded = decode_image(path.read_bytes())
    assert decoded is not None and mean_colour(decoded) == QColor("blue")


def test_sort_and_filter(view: Any) -> None:
    view.set_books(shelf())
    assert view.visible_ids() == [1, 4, 5, 3, 2], "recently read (opened, else added) first"
    view.set_sort("title")
    assert view.visible_ids() == [5, 2, 1, 4, 3], "title, ignoring case"
    view.set_sort("author")
    assert view.visible_ids() == [1, 4, 2, 3, 5], "by surname; no author last"
    assert view.sort.currentText() == "Author"
    view.filter.setText("austen")
    assert view.visible_ids() == [1, 4]
    view.filter.setText("jane  PERS")
    assert view.visible_ids() == [4], "every word must match"
    assert view.book_ids() == [1, 4, 2, 3, 5], "book_ids is the whole library"
    view.filter.setText("nothing like this")
    assert view.visible_ids() == []
    assert view.no_match.isVisible() and not view.view.isVisible()
    view.filter.clear()
    assert view.view.isVisible() and len(view.visible_ids()) == 5
    with pytest.raises(ValueError, match="unknown sort"):
        view.model.set_sort("colour")


def test_empty_state_says_what_to_do(view: Any, qtbot: Any) -> None:
    view.set_books([])
    assert view.empty_box.isVisible() and not view.view.isVisible()
    assert "Open a book" in view.empty.text() and "drag a file here" in view.empty.text()
    with qtbot.waitSignal(view.requestImport, timeout=1000):
        view.empty_open.click()
    view.set_books(shelf())
    assert not view.empty_box.isVisible() and view.view.isVisible()


def test_keyboard_moves_opens_and_asks_to_remove(view: Any, qtbot: Any) -> None:
    view.set_books(shelf())
    view.select(1)
    view.view.setFocus()
    qtbot.keyClick(view.view, Qt.Key.Key_Right)
    assert view.current_book_id() == 4
    with qtbot.waitSignal(view.requestOpen, timeout=1000) as opened:
        qtbot.keyClick(view.view, Qt.Key.Key_Return)
    assert opened.args == [4]
    qtbot.keyClick(view.view, Qt.Key.Key_Left)
    qtbot.keyClick(view.view, Qt.Key.Key_Down)
    assert view.current_book_id() == 2, "four columns: the fifth book is below the first"
    with qtbot.waitSignal(view.requestRemove, timeout=1000) as removed:
        qtbot.keyClick(view.view, Qt.Key.Key_Delete)
    assert removed.args == [2]


def test_double_click_and_context_menu(view: Any, qtbot: Any) -> None:
    view.set_books(shelf())
    index = view.model.index(0, 0)
    centre = view.view.visualRect(index).center()
    qtbot.mouseClick(view.view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    with qtbot.waitSignal(view.requestOpen, timeout=1000) as opened:
        qtbot.mouseDClick(view.view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert opened.args == [index.data(BOOK_ID)]
    menu = view.context_menu(centre)
    assert [a.text() for a in menu.actions() if a.text()] == ["Open", "Remove from library…"]
    with qtbot.waitSignal(view.requestRemove, timeout=1000) as removed:
        menu.actions()[-1].trigger()
    assert removed.args == [index.data(BOOK_ID)]
    assert view.context_menu(QPoint(view.view.width() - 3, view.view.height() - 3)) is None


def test_list_mode_keeps_the_selection(view: Any, qtbot: Any) -> None:
    view.set_books(shelf())
    view.select(3)
    grid_rect = view.view.visualRect(view.model.index(0, 0))
    view.list_button.click()
    assert not view.view.grid_mode and view.current_book_id() == 3
    list_rect = view.view.visualRect(view.model.index(0, 0))
    assert list_rect.width() > grid_rect.width() and list_rect.height() < grid_rect.height()
    view.grid_button.click()
    assert view.view.grid_mode and view.current_book_id() == 3


def test_grid_fills_the_width(view: Any, qtbot: Any) -> None:
    view.set_books(shelf())
    for width, columns in ((230, 2), (480, 4)):
        view.resize(width, 700)
        qtbot.waitUntil(lambda w=width: view.width() == w, timeout=1000)
        view.view.doItemsLayout()
        tops = [view.view.visualRect(view.model.index(r, 0)).top() for r in range(5)]
        assert tops.count(tops[0]) == columns, f"{columns} columns at {width} px"


def test_import_progress_cancel_and_inline_errors(view: Any, qtbot: Any) -> None:
    view.import_started("big.pdf")
    assert view.import_box.isVisible() and "big.pdf" in view.progress_label.text()
    view.import_progress(0.5, "Reading page 50 of 100")
    assert view.progress.value() == 500 and view.progress_label.text() == "Reading page 50 of 100"
    with qtbot.waitSignal(view.requestCancelImport, timeout=1000):
        view.cancel.click()
    view.import_finished()
    assert not view.import_box.isVisible()
    view.show_errors(["bad.epub is damaged: it is not a valid EPUB (zip) file."])
    assert view.error.isVisible() and "bad.epub is damaged" in view.error.text()
    view.error_close.click()
    assert not view.error.isVisible()


def test_every_control_has_a_name(view: Any) -> None:
    view.set_books(shelf())
    view.import_started("x.epub")
    view.show_errors(["x"])
    controls = (
        view.findChildren(QAbstractButton)
        + view.findChildren(QLineEdit)
        + view.findChildren(QComboBox)
    )
    unnamed = [w for w in controls if w.isVisible() and not w.accessibleName()]
    assert controls and unnamed == []
    index = view.model.index(view.model.row_of(2), 0)
    assert index.data(Qt.ItemDataRole.AccessibleTextRole) == "Dracula by Bram Stoker, 50% read"


def test_progress_is_drawn(view: Any, qtbot: Any) -> None:
    half = make_book(1, "Half", "A", read_to=51)
    none = make_book(2, "None", "B", read_to=1, added_at=dt.datetime(2020, 1, 1))
    view.set_books([half, none])
    image = view.view.grab().toImage()
    highlight = view.view.palette().color(view.view.palette().ColorRole.Highlight)

    def bar_fill(book: BookInfo) -> int:
        rect = view.view.visualRect(view.model.index(view.model.row_of(book.id), 0))
        y = rect.bottom() - 8 - 1
        return sum(
            1 for x in range(rect.left(), rect.right()) if _close(image.pixelColor(x, y), highlight)
        )

    assert bar_fill(half) > 15
    assert bar_fill(none) == 0


def _close(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 30


def test_cover_job_carries_what_a_cover_needs() -> None:
    book = make_book(7, "T", "A", format="epub", file_path="/x/book.epub")
    assert cover_job(book) == CoverJob(f"{7:064x}", "epub", "/x/book.epub", "T", "A")


def test_closing_the_view_while_covers_are_made(
    library: Library, qtbot: Any, books_dir: Path, real_font: str
) -> None:
    import_book(library, books_dir / "alice_in_wonderland.epub")
    import_book(library, books_dir / "metamorphosis.txt")
    widget = LibraryView(library.paths.data)
    widget.resize(400, 600)
    widget.show()
    widget.set_books(library.list_books())
    widget.view.viewport().repaint()  # asks for the covers
    widget.deleteLater()
    qtbot.wait(1000)  # work in flight finishes and is dropped quietly; queued work is not done
    again = LibraryView(library.paths.data)
    qtbot.addWidget(again)
    again.set_books(library.list_books())  # the next view makes what is missing
    covers = library.paths.data / "covers"
    qtbot.waitUntil(lambda: len(list(covers.glob("*.png"))) == 2, timeout=20000)
