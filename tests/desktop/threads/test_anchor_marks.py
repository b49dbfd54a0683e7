"""Marks at the anchored words: a passage that occurs twice on a page is marked where its
thread (or page chip) says, exactly; re-reading a book in the window lists what was lost."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox

from core.domain.messages import CitationRef
from core.store.anchors import collapse
from core.store.library import Library
from desktop.chat.render import page_chip
from desktop.chat.sources import citation
from tests.desktop.reader.conftest import alice_window, text_view

PHRASE = "said the Caterpillar. “Well,"


def _marked(view: Any) -> tuple[int, str]:
    marked = view.marks.mark_position()
    assert marked is not None
    cursor = QTextCursor(view.document())
    cursor.setPosition(marked[0])
    cursor.setPosition(marked[1], QTextCursor.MoveMode.KeepAnchor)
    _page, offset = view.flow.page_offset(marked[0])
    return offset, collapse(cursor.selectedText().replace("\u2029", " "))


def test_the_second_of_two_equal_passages_is_marked_exactly(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with alice_window(library, books_dir, qtbot, 31) as (win, book):
        text = library.page(book.id, 31).text
        pattern = r"\s+".join(re.escape(w) for w in PHRASE.split())
        first, second = [m.start() for m in re.finditer(pattern, text)][:2]
        assert first < second
        thread = win.app.conversations.thread_for(book.id, PHRASE, 31, near=second)
        assert thread.quote is not None and thread.quote.start == second
        win.threads.refresh()
        qtbot.waitUntil(lambda: thread.id in win.threads._threads, timeout=5000)
        win.threads.open_thread(thread.id)
        view = text_view(win.reader)
        offset, words = _marked(view)
        assert words == PHRASE
        assert offset == second - text[:second].count("\n\n"), "the second one, not the first"

        # a page chip of a stored citation carries the book's words and where they start
        cite = CitationRef(book.id, 31, 31, "the Caterpillar. Well", exact=PHRASE, start=second)
        href = page_chip(cite).split('href="')[1].split('"')[0]
        request = citation(QUrl(href))
        assert request is not None and (request.quote, request.near) == (PHRASE, second)
        win.reader.go_to_page(5)
        win.open_page_request(request)
        offset, words = _marked(view)
        assert words == PHRASE and offset == second - text[:second].count("\n\n")


def test_rereading_in_the_window_lists_what_was_lost(
    library: Library, books_dir: Path, qtbot: Any, real_font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[tuple[str, str]] = []
    monkeypatch.setattr(
        QMessageBox,
        "information",
        staticmethod(lambda _parent, title, text, *a: said.append((title, text))),
    )
    with alice_window(library, books_dir, qtbot, 12) as (win, book):
        library.add_highlight(book.id, 12, "Words that never were in Wonderland, not once")
        win.books.reread_current()
        qtbot.waitUntil(lambda: bool(said), timeout=20000)
        [(title, text)] = said
        assert title == "Some passages were not found"
        assert "1 of your highlights" in text
        assert "• p. 12, highlight: “Words that never were in Wonderland" in text
