"""The reader driven by real key presses on real books under the offscreen platform:
continuous reading without skipped text, Back/Forward, marks in view, Find, highlights,
keyboard selection, contents, footer and remembered settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog

from core.app import Margin
from core.books.importer import import_book
from core.store.library import Library
from desktop.main_window import MainWindow
from desktop.reader.pdf_view import PdfView
from desktop.reader.reader import Reader
from desktop.reader.text_view import TextView
from desktop.theme import highlight_colour
from tests.core.books.epubgen import make_epub
from tests.desktop.conftest import close_window
from tests.support.pdfgen import make_text_pdf


@pytest.fixture
def note_dialog(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The "Note (optional)" dialog, answered by the test (never shown)."""
    answer: dict[str, Any] = {"text": "", "ok": True, "asked": 0}

    def get_text(*_a: object, **_k: object) -> tuple[str, bool]:
        answer["asked"] += 1
        return answer["text"], answer["ok"]

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(get_text))
    return answer


@pytest.fixture
def reader(library: Library, qtbot: Any, real_font: str, note_dialog: Any) -> Reader:
    widget = Reader(library)
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def text_view(reader: Reader) -> TextView:
    assert isinstance(reader.view, TextView)
    return reader.view


def press(
    view: Any, key: Qt.Key, mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    QTest.keyClick(view, key, mods)
    QApplication.processEvents()


def visible_offsets(view: TextView) -> list[tuple[int, int, int]]:
    """(page, first offset, last offset) of the text fully on screen, per stored page."""
    line = view.line_height()
    rect = view.viewport().rect()
    first = view.cursorForPosition(QPoint(0, int(line * 0.9))).position()
    last = view.cursorForPosition(
        QPoint(rect.width() - 1, rect.height() - int(line * 0.9))
    ).position()
    spans = []
    position = first
    while position <= last:
        page, offset = view.page_offset(position)
        index = view.loaded.index(page)
        page_end = view.starts[index + 1] - 1 if index + 1 < len(view.starts) else view._end()
        upto = min(last, page_end)
        spans.append((page, offset, offset + (upto - position)))
        position = page_end + 1
    return spans


def chapter_pages(library: Library, book_id: int, page: int) -> list[int]:
    rows = library.db.execute_sql(
        "SELECT number, chapter FROM page WHERE book_id = ? ORDER BY number", (book_id,)
    ).fetchall()
    chapter = rows[page - 1][1]
    return [n for n, c in rows if c == chapter]


# continuous reading ------------------------------------------------------------------------


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
                lengths[page] = len(view.page_text(page))
        seen_pages.append(reader.page)
        if reader.page > pages[-1]:
            break
        press(view, Qt.Key.Key_PageDown)
    assert reader.page == pages[-1] + 1, "reading went on into the next chapter"
    assert seen_pages == sorted(seen_pages), "the page indicator only moved forward"
    for page in pages:
        text = view.page_text(page) if page in view.loaded else None
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
    assert reader.page == pages[0] and view.verticalScrollBar().value() <= view._y(
        view.starts[view.loaded.index(pages[0])]
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
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id, 10)
        view = text_view(win.reader)
        view.setFocus()
        before = view.top_position()
        press(view, Qt.Key.Key_PageDown)
        after = view.top_position()
        assert after[0] == 10 and after[1] > before[1], "one screen, still on p. 10"
    finally:
        close_window(qtbot, win)


def test_pdf_page_down_keeps_a_line_of_overlap_at_any_zoom(
    reader: Reader, library: Library, tmp_path: Path, qtbot: Any
) -> None:
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 6)]
    pdf = make_text_pdf(tmp_path / "long.pdf", texts)
    book = import_book(library, pdf).book
    reader.open_book(book, 1)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(3.0)
    view.go_to_page(1)
    bar = view.verticalScrollBar()
    height = view.viewport().height()
    pages_seen = []
    previous = bar.value()
    for _ in range(12):
        press(view, Qt.Key.Key_PageDown)
        value = bar.value()
        assert 0 < value - previous <= height - view.overlap() + 1, "no gap between screens"
        previous = value
        pages_seen.append(reader.page)
    assert pages_seen[-1] >= 2 and pages_seen == sorted(pages_seen)
    press(view, Qt.Key.Key_PageUp)
    assert bar.value() < previous


# position and the spoiler bound ---------------------------------------------------------------


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


# Back / Forward ------------------------------------------------------------------------------


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


# marks ---------------------------------------------------------------------------------------


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
        assert view.marked() and view.mark_visible(), f"the mark on p. {page} is out of view"


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
    start = view.mark_position()
    assert start is not None and view.page_offset(start[0])[0] == 31


def test_pdf_citation_mark_is_centred(reader: Reader, library: Library, tmp_path: Path) -> None:
    texts = [
        f"Page {n}. " + "Filler words here. " * 150 + f"Closing words {n}." for n in range(1, 4)
    ]
    book = import_book(library, make_text_pdf(tmp_path / "c.pdf", texts)).book
    reader.open_book(book, 1)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(3.0)
    reader.go_to_page(2, mark="Closing words 2")
    assert reader.page == 2 and view.mark_visible()


# Find ---------------------------------------------------------------------------------------


def test_find_lists_matches_in_book_order_with_a_count_and_f3_walks_them(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.find_box.setText("Cheshire")
    reader.run_find()
    pages = [
        reader.find_results.item(i).data(Qt.ItemDataRole.UserRole + 2)[0]
        for i in range(reader.find_results.count())
    ]
    assert pages == sorted(pages) and len(pages) > 3
    assert reader.find_count.text() == f"{len(pages)} matches"
    view = text_view(reader)
    view.setFocus()
    press(view, Qt.Key.Key_F3)
    assert reader.page == pages[0] and view.marked() and view.mark_visible()
    press(view, Qt.Key.Key_F3)
    assert reader.page == pages[1] and view.mark_visible()
    assert reader.find_count.text() == f"2 of {len(pages)} matches"
    press(view, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert reader.page == pages[0]
    assert reader.find_results.currentRow() == 0


def test_find_options_and_nothing_found(reader: Reader, library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.find_box.setText("cat")
    reader.run_find()
    loose = reader.find_results.count()
    reader.whole_word_box.setChecked(True)
    reader.run_find()
    whole = reader.find_results.count()
    assert 0 < whole < loose
    reader.exact_box.setChecked(True)
    reader.find_box.setText("CHESHIRE")
    reader.run_find()
    assert reader.find_results.count() == 0
    assert reader.find_count.text() == "Nothing matches “CHESHIRE”."


# selection ------------------------------------------------------------------------------------


def test_keyboard_selection_then_ask_shortcut_emits_the_text(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id, 8)
        view = text_view(win.reader)
        view.setFocus()
        shift_ctrl = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier
        for _ in range(4):
            press(view, Qt.Key.Key_Right, shift_ctrl)
        press(view, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
        text = view.selected_text()
        assert len(text.split()) >= 4
        assert win.reader.selection_bar.isVisible()
        bar = win.reader.selection_bar.geometry()
        area = view.viewport().geometry()
        area.moveTopLeft(view.viewport().mapTo(win.reader, area.topLeft()))
        assert area.intersects(bar) and bar.bottom() <= win.reader.height()
        with qtbot.waitSignal(win.requestAsk, timeout=2000) as blocker:
            press(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert blocker.args[0].text == text and blocker.args[0].action == "ask"
    finally:
        close_window(qtbot, win)


def test_selection_bar_stays_in_view_for_a_long_selection(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 10)
    view = text_view(reader)
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.starts[view.loaded.index(10)])
    cursor.setPosition(view.starts[view.loaded.index(12)], QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)  # far longer than the screen
    bar = reader.selection_bar.geometry()
    top = view.viewport().mapTo(reader, view.viewport().rect().topLeft()).y()
    bottom = top + view.viewport().height()
    assert reader.selection_bar.isVisible()
    assert top <= bar.top() and bar.bottom() <= bottom, "the bar is inside the visible text"


def test_selection_action_shortcuts_in_the_reader(
    reader: Reader, library: Library, books_dir: Path, qtbot: Any
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 10)
    view = text_view(reader)
    word = library.page(book.id, 10).text.split()[5]
    assert view.select_text(word)
    with qtbot.waitSignal(reader.requestAsk, timeout=2000) as blocker:
        press(
            view,
            Qt.Key.Key_D,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
    assert blocker.args[0].action == "define" and blocker.args[0].text == word


# highlights ----------------------------------------------------------------------------------


def test_highlight_cancel_saves_nothing_and_ok_saves_the_chosen_colour(
    reader: Reader, library: Library, books_dir: Path, note_dialog: dict[str, Any]
) -> None:
    book = import_book(library, books_dir / "metamorphosis.epub").book
    reader.open_book(book, 4)
    view = text_view(reader)
    phrase = " ".join(library.page(book.id, 4).text.split()[5:10])
    assert view.select_text(phrase)
    note_dialog["ok"] = False
    reader.selection_bar.buttons["highlight:blue"].click()
    assert note_dialog["asked"] == 1 and library.list_highlights(book.id) == []
    note_dialog.update(ok=True, text="a note")
    assert view.select_text(phrase)
    reader.selection_bar.buttons["highlight:green"].click()
    (saved,) = library.list_highlights(book.id)
    assert (saved.colour, saved.note, saved.text) == ("green", "a note", phrase)
    green = highlight_colour("green")
    drawn = [s for s in view.extraSelections() if s.format.background().color() == green]
    assert drawn and drawn[0].cursor.selectedText() == phrase


def test_a_highlight_over_paragraphs_and_pages_is_drawn_over_its_whole_extent(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.setProperty("headless", True)
    reader.open_book(book, 10)
    view = text_view(reader)
    start = view.starts[view.loaded.index(10)] + 300
    end = view.starts[view.loaded.index(11)] + 400
    cursor = QTextCursor(view.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    selected = view.selected_text()
    assert "\n" in selected and len(selected) > 1000
    assert reader.ask_about_selection("highlight")
    (saved,) = library.list_highlights(book.id)
    assert saved.anchor["start"] == {"page": 10, "offset": 300}
    assert saved.anchor["end"] == {"page": 11, "offset": 400}
    reader.go_to_page(60)
    reader.go_to_page(11)  # shown again from the other side
    yellow = highlight_colour("yellow")
    drawn = [
        s.cursor.selectedText().replace("\u2029", "\n").strip()
        for s in view.extraSelections()
        if s.format.background().color() == yellow
    ]
    assert drawn == [selected]


def test_an_old_highlight_without_offsets_still_shows(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    phrase = " ".join(library.page(book.id, 7).text.split()[10:16])
    library.add_highlight(book.id, 7, phrase, colour="pink")
    reader.open_book(book, 7)
    drawn = [s.cursor.selectedText() for s in text_view(reader).extraSelections()]
    assert phrase in drawn


# contents, footer, images, settings -------------------------------------------------------------


def test_contents_have_a_page_column_and_follow_the_reading(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    toc = library.toc(book.id)
    reader.open_book(book, toc[3].page)
    item = reader.toc.topLevelItem(3)
    assert item.text(0) == toc[3].title and item.text(1) == str(toc[3].page)
    assert reader.current_chapter() is item and item.font(0).bold()
    assert (
        toc[3].title in reader.footer.text()
        and f"p. {toc[3].page} of {book.page_count}" in reader.footer.text()
    )
    assert "min left in chapter" in reader.footer.text()
    view = text_view(reader)
    while reader.page < toc[4].page:
        press(view, Qt.Key.Key_PageDown)
    assert reader.current_chapter() is reader.toc.topLevelItem(4)
    assert not item.font(0).bold()


def test_a_book_without_contents_says_so(reader: Reader, library: Library, tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("Just some words.\n\nAnd a few more.", encoding="utf-8")
    book = import_book(library, plain).book
    reader.open_book(book, 1)
    if library.toc(book.id):
        pytest.skip("the text parser made contents for this file")
    assert reader.toc_stack.currentWidget() is reader.toc_empty
    assert "no table of contents" in reader.toc_empty.text()


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
    html = view.document().toHtml()
    assert 'width="' in html


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
    first.zoom_in()
    first.zoom_in()
    assert first.font_size == 15
    after = view.top_position()
    assert after[0] == place[0] and abs(after[1] - place[1]) < 120, "the place is kept"
    first.set_theme("dark")
    assert view.top_position()[0] == place[0]
    first.open_book(pdf, 1)
    assert isinstance(first.view, PdfView)
    first.view.set_scale(2.5)
    first.close_book()
    first.settings.sync()
    second = Reader(library)
    qtbot.addWidget(second)
    assert second.font_size == 15
    second.open_book(pdf, 1)
    assert isinstance(second.view, PdfView) and abs(second.view.scale - 2.5) < 0.01
    assert str(library.paths.config) in second.settings.fileName()


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


def test_back_after_a_citation_from_the_chat_returns_in_one_step(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    from desktop.requests import OpenPageRequest

    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    win = MainWindow(Margin.of(library), restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.open_book(book.id, 12)
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
    finally:
        close_window(qtbot, win)


def test_pdf_back_returns_to_the_same_place_on_the_page(
    reader: Reader, library: Library, tmp_path: Path
) -> None:
    texts = [f"Page {n}. " + "Words of the page go on. " * 120 for n in range(1, 8)]
    book = import_book(library, make_text_pdf(tmp_path / "b.pdf", texts)).book
    reader.open_book(book, 2)
    view = reader.view
    assert isinstance(view, PdfView)
    view.set_scale(2.0)
    press(view, Qt.Key.Key_PageDown)
    here = view.position()
    assert here[0] == 2 and here[1] > 50
    reader.go_to_page(6)
    assert reader.page == 6
    reader.go_back()
    assert view.position() == here and reader.page == 2


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
    found = None
    while not cursor.atEnd():
        cursor.movePosition(QTextCursor.MoveOperation.NextCharacter)
        if cursor.charFormat().isImageFormat():
            found = view.cursorRect(cursor)
            break
    assert found is not None
    shown: list[str] = []
    view.imageOpened.connect(shown.append)
    QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=found.center() - QPoint(4, 0))
    assert shown and shown[0].endswith("big.png")
    dialogs = [w for w in QApplication.topLevelWidgets() if w.windowTitle() == "Image"]
    assert dialogs and dialogs[-1].isVisible()
    dialogs[-1].close()


def test_time_left_in_the_chapter_follows_the_measured_pace(
    reader: Reader, library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.reading

    clock = [1000.0]
    monkeypatch.setattr(core.reading.time, "monotonic", lambda: clock[0])
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    toc = library.toc(book.id)
    chapter = next(t for t in toc if "CHAPTER VI" in t.title)
    library.set_position(book.id, chapter.page)  # reading there, not looking ahead
    reader.open_book(library.get_book(book.id))
    for _ in range(3):
        clock[0] += 30.0  # thirty seconds a page
        reader.next_page()
    left = len(chapter_pages(library, book.id, chapter.page)) - 3
    assert f"about {max(1, round(left * 30 / 60))} min left in chapter" in reader.footer.text()
    reader.save_position()
    assert float(str(reader.settings.value("seconds_per_page"))) == 30.0


def test_f3_marks_each_match_on_a_page_in_turn(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    reader.find_box.setText("Alice")
    reader.run_find()
    matches = reader.side.finder.matches
    index = next(i for i in range(len(matches) - 2) if matches[i].page == matches[i + 2].page)
    page = matches[index].page
    view = text_view(reader)
    reader.side.finder.go_match(index)
    offsets = []
    for _ in range(3):
        assert reader.page == page and view.mark_visible()
        mark = view.mark_position()
        assert mark is not None and view.page_offset(mark[0])[0] == page
        offsets.append(view.page_offset(mark[0])[1])
        press(view, Qt.Key.Key_F3)
    assert offsets == sorted(offsets) and len(set(offsets)) == 3, "three different places"


def test_a_highlight_in_the_list_opens_at_its_own_place(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.setProperty("headless", True)
    reader.open_book(book, 20)
    view = text_view(reader)
    text = view.page_text(20)
    word = "Alice"
    second = text.find(word, text.find(word) + 1)
    assert second > 0, "the page names Alice twice"
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.starts[view.loaded.index(20)] + second)
    cursor.setPosition(cursor.position() + len(word), QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    assert reader.ask_about_selection("highlight:pink")
    reader.go_to_page(70)
    reader._result_go(reader.highlight_list.item(0))
    mark = view.mark_position()
    assert reader.page == 20 and mark is not None and view.mark_visible()
    assert view.page_offset(mark[0]) == (20, second), "the second Alice, not the first"


def test_after_clicking_a_contents_entry_page_down_reads_on_from_there(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    reader.open_book(book, 1)
    item = reader.toc.topLevelItem(6)
    rect = reader.toc.visualItemRect(item)
    QTest.mouseClick(reader.toc.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    start = int(item.data(0, Qt.ItemDataRole.UserRole + 2))
    assert reader.page == start
    view = text_view(reader)
    before = view.top_position()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_PageDown)
    after = view.top_position()
    assert after > before and after[0] <= start + 1, "one screen on, not a page skipped"


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


# looking ahead -------------------------------------------------------------------------------


def test_a_page_turn_after_a_jump_is_looking_ahead_until_read_to_here(
    reader: Reader, library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 30)
    reader.open_book(library.get_book(book.id))
    view = text_view(reader)
    assert "Looking ahead" not in reader.footer.plain_text()
    reader.page_box.setFocus()  # Go to page 80, typed
    reader.page_box.selectAll()
    QTest.keyClicks(reader.page_box, "80")
    press(reader.page_box, Qt.Key.Key_Return)
    assert reader.page == 80
    QTest.mouseClick(reader.next_button, Qt.MouseButton.LeftButton)  # ▶
    press(view, Qt.Key.Key_PageDown)
    assert reader.page >= 81
    assert reader.footer.plain_text().startswith(
        "Looking ahead — the assistant still stops at p. 30"
    )
    reader.save_position()
    assert library.get_book(book.id).read_to == 30, "page turns after a jump are not reading"
    here = reader.page
    press(
        view, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )  # Read to here
    assert library.get_book(book.id).read_to == here
    assert "Looking ahead" not in reader.footer.plain_text()
    QTest.mouseClick(reader.next_button, Qt.MouseButton.LeftButton)
    reader.save_position()
    assert library.get_book(book.id).read_to == here + 1, "reading on from the bound again"


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
