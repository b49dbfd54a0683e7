"""Reading aloud in the window: ``install(window)`` is the one call that joins it.

``speaker`` (Qt's text to speech), ``controller`` (sentence by sentence, the controls, the
watchdog and the sleep timer), ``module`` (the reader: where to start, marks, page turns,
listening is reading), ``actions`` (menu, toolbar button, keys, answers aloud)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QLabel

from desktop.events import BookClosed, BookOpened
from desktop.readaloud.actions import ReadAloudActions
from desktop.readaloud.module import ReaderSpeech

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow


def install(window: MainWindow) -> ReadAloudActions:
    """Add Read aloud to ``window``: its menu (before Help), a toolbar button, the keys,
    and "Read aloud" on the chat's answers."""
    reader_speech = ReaderSpeech(window.reader, window.reader.views)
    parts = ReadAloudActions(window, reader_speech)
    bar = window.menuBar()
    help_menu = next((a for a in bar.actions() if a.text() == "&Help"), None)
    bar.insertMenu(help_menu, parts.menu) if help_menu is not None else bar.addMenu(parts.menu)
    layout = window.reader.toolbar.layout()
    if isinstance(layout, QHBoxLayout):
        layout.addWidget(parts.button)
    events = window.reader.events  # the book's source follows the open book
    events.subscribe(BookOpened, lambda _e: reader_speech.book_opened())
    events.subscribe(BookClosed, lambda e: None if e.reopening else reader_speech.book_opened())
    chat = window.chat
    if not isinstance(chat, QLabel):  # the chat pane, not the label standing in for it
        chat.transcript.anchorClicked.connect(
            lambda url: parts.answer_link(url, chat.messages.views)
        )
        chat.answerRendered.connect(lambda conversation: parts.answer_finished(chat, conversation))
    window.read_aloud = parts
    return parts
