"""Threads in the window, driven by real input: a question about a selected passage starts
(then continues) its thread; the thread shows its passage at the top; the Threads tab lists
threads in book order; a mark beside the passage (and a different one beside a note) is
drawn in the margin of EPUB, text and PDF views; clicking it opens the thread with the words
marked. Screenshots light and dark go to the folder MARGIN_SHOTS names, if any."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QTextCursor
from PySide6.QtTest import QTest

from core.books.importer import import_book
from core.store.anchors import collapse
from core.store.library import Library
from desktop.highlights.margin_marks import NOTE_RGB, THREAD_RGB, MarginMarks
from desktop.reader.paged_view import CLICK_ZONE
from tests.desktop.reader.conftest import alice_window, press, text_view
from tests.support.shots import save_shot


def _close(colour: QColor, rgb: tuple[int, int, int], slack: int = 40) -> bool:
    have = (colour.red(), colour.green(), colour.blue())
    return all(abs(a - b) <= slack for a, b in zip(have, rgb, strict=True))


def _mark_pixels(marks: MarginMarks, kind: str) -> list[QColor]:
    """The colour at the middle of each drawn mark of ``kind``, read from a screenshot of
    the view (the marks strip is a child of its viewport)."""
    viewport = marks.parentWidget()
    assert viewport is not None
    image: QImage = viewport.grab().toImage()
    ratio = image.devicePixelRatio()
    out = []
    for box, mark in marks._hits:
        if mark.kind != kind:
            continue
        centre = marks.mapTo(viewport, box.center().toPoint())
        out.append(image.pixelColor(int(centre.x() * ratio), int(centre.y() * ratio)))
    return out


def _select_words(view: Any, page: int, offset: int, words: int) -> str:
    """Click at ``offset`` of ``page`` and extend the selection by ``words`` words with the
    keyboard, as a reader does."""
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.flow.starts[view.flow.loaded.index(page)] + offset)
    at = view.cursorRect(cursor).center()
    if at.x() < view.viewport().width() * CLICK_ZONE:  # a click there turns the page
        view.setTextCursor(cursor)  # as caret browsing (F7) puts it
    else:
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(at.x() + 1, at.y()))
    shift_ctrl = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier
    for _ in range(words):
        press(view, Qt.Key.Key_Right, shift_ctrl)
    return str(view.marks.selected_text())


def _shoot(win: Any, name: str) -> None:
    save_shot(win.grab(), f"threads-{name}")


def test_a_question_about_a_passage_is_a_thread_marked_in_the_margin(
    library: Library, books_dir: Path, qtbot: Any, real_font: str, note_dialog: Any
) -> None:
    with alice_window(library, books_dir, qtbot, 10) as (win, book):
        win.resize(1400, 860)
        threads = win.threads
        view = text_view(win.reader)
        text = library.page(book.id, 10).text
        start = text.index(". ", 200) + 2
        view_start = start - text[:start].count("\n\n")
        picked = _select_words(view, 10, view_start, 6)
        assert len(picked.split()) >= 5
        assert win.reader.selection_bar.isVisible()
        QTest.mouseClick(win.reader.selection_bar.buttons["explain"], Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(win.app.conversations.threads(book.id)) == 1, timeout=5000)
        [thread] = win.app.conversations.threads(book.id)
        assert thread.quote is not None and thread.quote.page == 10
        assert thread.quote.exact == collapse(picked) and thread.quote.start == start
        chat = win.chat
        qtbot.waitUntil(lambda: chat.thread_header.isVisible(), timeout=5000)
        assert chat.conversation_id == thread.id
        assert "About p. 10</a>: “" in chat.thread_header.text()
        qtbot.waitUntil(lambda: not chat.answering(conversation_id=thread.id), timeout=10000)

        # the same passage again (another quick action): the same thread goes on
        _select_words(view, 10, view_start, 3)
        QTest.mouseClick(win.reader.selection_bar.buttons["define"], Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not chat.answering(conversation_id=thread.id), timeout=10000)
        assert [t.id for t in win.app.conversations.threads(book.id)] == [thread.id]
        assert win.app.conversations.get(thread.id).message_count == 4

        # a highlight with a note on the same screen: a note mark
        later = text.index(". ", start + 300) + 2
        _select_words(view, 10, later - text[:later].count("\n\n"), 4)
        win.reader.selection_bar.buttons["highlight:yellow"].click()
        [saved] = library.list_highlights(book.id)  # its note, written in its bar
        win.reader.highlight_actions.open(saved.id, view.mapToGlobal(QPoint(10, 10)), True)
        win.reader.highlight_actions.save_note("the Queen again")
        qtbot.waitUntil(lambda: len(threads.marks.marks) == 2, timeout=5000)
        qtbot.waitUntil(lambda: len(threads.marks._hits) == 2, timeout=5000)
        assert [_close(c, THREAD_RGB) for c in _mark_pixels(threads.marks, "thread")] == [True]
        assert [_close(c, NOTE_RGB) for c in _mark_pixels(threads.marks, "note")] == [True]
        # beside the passage's own line
        [(y, _mark)] = [m for m in threads.marks.visible_marks() if m[1].kind == "thread"]
        cursor = QTextCursor(view.document())
        cursor.setPosition(view.flow.starts[view.flow.loaded.index(10)] + view_start)
        line = view.cursorRect(cursor)
        assert line.top() <= y <= line.bottom()

        # the Threads tab, in book order
        win.panes.set_side_visible(True)
        win.reader.side.show_panel("Threads")
        assert threads.panel.list.count() == 1
        assert threads.panel.list.item(0).text().startswith("p. 10 — “")
        win.set_theme("light")
        _shoot(win, "threads-light.png")
        win.set_theme("dark")
        qtbot.wait(50)
        _shoot(win, "threads-dark.png")
        win.set_theme("light")

        # a free conversation has no passage; clicking the mark opens the thread, marked
        chat.new_conversation()
        qtbot.waitUntil(lambda: chat.conversation_id != thread.id, timeout=5000)
        qtbot.waitUntil(lambda: not chat.thread_header.isVisible(), timeout=5000)
        win.reader.go_to_page(30)
        qtbot.waitUntil(lambda: not threads.marks._hits, timeout=3000)  # no mark there
        win.reader.go_to_page(10)
        qtbot.waitUntil(
            lambda: any(h[1].kind == "thread" for h in threads.marks._hits), timeout=3000
        )
        box = next(h[0] for h in threads.marks._hits if h[1].kind == "thread")
        QTest.mouseClick(threads.marks, Qt.MouseButton.LeftButton, pos=box.center().toPoint())
        qtbot.waitUntil(lambda: chat.conversation_id == thread.id, timeout=5000)
        qtbot.waitUntil(lambda: chat.thread_header.isVisible(), timeout=5000)
        assert view.marks.marked()
        marked = view.marks.mark_position()
        assert marked is not None
        a, b = marked
        cursor = QTextCursor(view.document())
        cursor.setPosition(a)
        cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
        assert collapse(cursor.selectedText().replace("\u2029", " ")) == thread.quote.exact


def test_margin_marks_in_a_text_book_and_beside_a_pdf_line(
    library: Library, books_dir: Path, pdf_dir: Path, qtbot: Any, real_font: str
) -> None:
    from desktop.reader.pdf_view import PdfView

    txt = import_book(library, books_dir / "metamorphosis.txt").book
    pdf = import_book(library, pdf_dir / "pdflatex-4-pages.pdf").book
    with alice_window(library, books_dir, qtbot, 3) as (win, _alice):
        for book, page in ((txt, 5), (pdf, 2)):
            words = collapse(library.page(book.id, page).text)
            chosen = words[40:100].strip()
            thread = win.app.conversations.thread_for(book.id, chosen, page)
            win.open_book(book.id, page)
            marks = win.threads.marks
            qtbot.waitUntil(lambda m=marks: len(m.marks) == 1, timeout=5000)
            if isinstance(win.reader.view, PdfView):
                qtbot.waitUntil(lambda: win.reader.view.is_drawn(), timeout=10000)
            qtbot.waitUntil(lambda m=marks: len(m._hits) == 1, timeout=5000)
            assert [_close(c, THREAD_RGB) for c in _mark_pixels(marks, "thread")] == [True]
            assert marks._hits[0][1].key == thread.id
            if isinstance(win.reader.view, PdfView):
                view = win.reader.view
                rect = view.rects[page - 1]
                top = view.canvas.mapTo(view.viewport(), rect.topLeft().toPoint()).y()
                y = marks.visible_marks()[0][0]
                assert top < y < top + rect.height(), "beside a line of its page"
                _shoot(win, "threads-pdf.png")
