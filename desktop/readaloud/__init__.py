"""Reading aloud in the window: ``install(window)`` is the one call that joins it.

``speaker`` (Qt's text to speech), ``controller`` (sentence by sentence, the controls, the
watchdog and the sleep timer), ``module`` (the reader: where to start, marks, page turns,
listening is reading), ``actions`` (menu, toolbar button, keys, answers aloud)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout

from desktop.events import BookClosed, BookOpened
from desktop.readaloud.actions import ReadAloudActions
from desktop.readaloud.module import ReaderSpeech


def install(window: Any) -> ReadAloudActions:
    """Add Read aloud to ``window``: its menu (before Help), a toolbar button, the keys,
    and "Read aloud" on the chat's answers."""
    reader_speech = ReaderSpeech(window.reader)
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
    transcript = getattr(window.chat, "transcript", None)
    if transcript is not None:
        transcript.anchorClicked.connect(
            lambda url: parts.answer_link(url, window.chat.messages.views)
        )
    rendered = getattr(window.chat, "answerRendered", None)
    if rendered is not None:
        rendered.connect(lambda conversation: parts.answer_finished(window.chat, conversation))
    window.read_aloud = parts
    return parts
