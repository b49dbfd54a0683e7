"""The window's modules follow the book on the reader's event stream (desktop/events.py):
the chat, the threads and the notes take the book from BookOpened and let it go on a
BookClosed that opens nothing; a book read anew (closed, reopening) keeps the chat's
conversation, as the window's own signal did before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.events import BookClosed, ConversationChanged
from tests.desktop.conftest import open_alice


def test_chat_threads_and_notes_follow_the_book_on_the_stream(window: Any, books_dir: Path) -> None:
    closed: list[BookClosed] = []
    window.reader.events.subscribe(BookClosed, closed.append)
    book_id = open_alice(window, books_dir, 5)
    window.panels.open_notes()
    notes = window.panels.notes_panel
    assert (window.chat.book_id, window.threads.book_id, notes.book_id) == (book_id,) * 3
    assert closed[-1].reopening, "opening a book closes the last one to open another"
    chosen = int(window.chat.service.create_conversation(book_id).id)
    window.chat.select_conversation(chosen)
    window.reader.close_book(reopening=True)  # read anew: the same book opens at once
    window.open_book(book_id, 5)
    assert window.chat.book_id == book_id and window.chat.conversation_id == chosen
    before = window.threads._generation
    window.chat.events.publish(ConversationChanged(book_id))  # a thread started: read again
    assert window.threads._generation == before + 1
    window.reader.close_book()  # removed: nothing opens
    assert (window.chat.book_id, window.threads.book_id, notes.book_id) == (None,) * 3
