"""A PDF marks the anchored words exactly: a thread or a page chip about a sentence that
stands twice on its page marks the one it is about, every word of it and nothing more, and
its margin mark stands beside that one's line. Driven with a real click on the mark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, Qt, QUrl
from PySide6.QtTest import QTest

from core.domain.messages import CitationRef
from core.store.anchors import collapse
from core.store.library import Library
from desktop.chat.render import page_chip
from desktop.chat.sources import citation
from desktop.reader.pdf_marks import find_words
from desktop.reader.pdf_view import PdfView
from tests.desktop.pdf_drag import PAGE, PHRASE, drag_over_words, open_pdf, twice_pdf
from tests.desktop.reader.conftest import alice_window


def _marked_words(view: PdfView) -> tuple[str, float]:
    """The words under the mark, read back from the page by their place (QtPdf's selection
    between the mark's first and last boxes), and the mark's top in page points."""
    assert view.mark is not None
    index, polys = view.mark
    boxes = [p.boundingRect() for p in polys]
    first, last = boxes[0], boxes[-1]
    start = QPointF(first.left() + 0.5, first.center().y())
    end = QPointF(last.right() - 0.5, last.center().y())
    text = view.document.getSelection(index, start, end).text()
    return collapse(text), min(b.top() for b in boxes)


def test_a_thread_about_the_second_of_two_equal_sentences_marks_it_exactly(
    library: Library, pdf_dir: Path, books_dir: Path, qtbot: Any
) -> None:
    book, stored, first, second = twice_pdf(library, pdf_dir)
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        win.resize(1200, 900)
        thread = win.app.conversations.thread_for(book.id, PHRASE, PAGE, near=second)
        assert thread.quote is not None and thread.quote.start == second
        win.open_book(book.id, PAGE)
        view = win.reader.view
        assert isinstance(view, PdfView)
        marks = win.threads.marks
        qtbot.waitUntil(lambda: len(marks.marks) == 1, timeout=5000)
        qtbot.waitUntil(view.is_drawn, timeout=10000)
        # the mark is where the passage is: scroll the page so both sentences are on screen
        view.go_to_page(PAGE, view.rects[PAGE - 1].height() * 0.1)
        qtbot.waitUntil(lambda: len(marks._hits) == 1, timeout=5000)

        # where both sentences stand on the page, read from QtPdf's own text layout
        raw = view.document.getAllText(PAGE - 1).text()
        tops = []
        for near in (first, second):
            place = find_words(raw, PHRASE, stored, near)
            assert place is not None
            bounds = view.document.getSelectionAtIndex(PAGE - 1, *place).bounds()
            tops.append(min(p.boundingRect().top() for p in bounds))
        assert tops[0] + 20 < tops[1], "two places, lines apart"

        # the margin mark stands beside the second one's line, not the first's
        [(y, _mark)] = marks.visible_marks()
        rect = view.rects[PAGE - 1]
        line = view.canvas.mapTo(view.viewport(), QPointF(0, rect.top() + tops[1] * view.scale))
        assert abs(y - line.y()) < 12 * view.scale

        # a real click on the mark opens the thread with the words marked, exactly
        box = marks._hits[0][0]
        QTest.mouseClick(marks, Qt.MouseButton.LeftButton, pos=box.center().toPoint())
        qtbot.waitUntil(lambda: win.chat.conversation_id == thread.id, timeout=5000)
        words, top = _marked_words(view)
        assert words == PHRASE, "every word, no more: not its first eight"
        assert abs(top - tops[1]) < 1, "the second of the two"
        assert view.mark_visible()

        # a page chip of a stored citation of the first one marks the first one
        cite = CitationRef(book.id, PAGE, PAGE, PHRASE, exact=PHRASE, start=first)
        href = page_chip(cite).split('href="')[1].split('"')[0]
        request = citation(QUrl(href))
        assert request is not None
        win.open_page_request(request)
        words, top = _marked_words(view)
        assert words == PHRASE and abs(top - tops[0]) < 1


def test_words_found_in_the_raw_text_of_a_page() -> None:
    raw = "Hello  there\r\nworld. Hello there\r\nworld again. The end of pa\x02\r\nge words"
    stored = "Hello there\nworld. Hello there\nworld again. The end of pa\nge words"
    assert find_words(raw, "Hello there world", stored, 19) == (21, 18)
    assert find_words(raw, "Hello there world", stored, 0) == (0, 19)
    assert find_words(raw, "Hello there world", stored) == (0, 19)
    # a passage that runs on to the next page: its part on this page
    at, length = find_words(raw, "The end of pa ge words and more on the next page") or (0, 0)
    assert collapse(raw[at : at + length].replace("\x02", "")) == "The end of pa ge words"
    # quoted loosely: its first words, as a search would
    assert find_words(raw, "hello THERE, world") is None
    loose = "hello there world. hello there world again. The END of pages"
    at, length = find_words(raw, loose) or (0, 0)
    assert (at, collapse(raw[at : at + length])) == (
        0,
        "Hello there world. Hello there world again. The",
    )
    assert find_words(raw, "nothing like it") is None
    assert find_words("", "words") is None
    assert find_words(raw, "   ") is None


def test_asking_about_the_second_of_two_equal_sentences_in_a_pdf_anchors_there(
    library: Library, pdf_dir: Path, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    book, stored, first, second = twice_pdf(library, pdf_dir)
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        win.resize(1200, 900)
        view = open_pdf(win, book, qtbot)
        # the second sentence's boxes on the page, then a real drag over them
        drag_over_words(view, PAGE, PHRASE, stored, second)
        bar = win.reader.selection_bar
        qtbot.waitUntil(bar.isVisible, timeout=3000)
        QTest.mouseClick(bar.buttons["explain"], Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(win.app.conversations.threads(book.id)) == 1, timeout=5000)
        [thread] = win.app.conversations.threads(book.id)
        assert thread.quote is not None
        assert (thread.quote.page, thread.quote.exact) == (PAGE, PHRASE)
        assert thread.quote.start == second != first, "the occurrence selected, not the first"
        qtbot.waitUntil(lambda: not win.chat.answering(conversation_id=thread.id), timeout=10000)
