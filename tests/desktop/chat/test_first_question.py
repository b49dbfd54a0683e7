"""desktop/chat/first_question.py: with a model connected, the chat pane readies the first
question on the open book (its client, then the book's part, once its counts are stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agent import warm
from core.agent.spoiler_stats import prepare_book
from core.store import reserve
from tests.desktop.chat.conftest import read_alice, use_server
from tests.desktop.conftest import run_until
from tests.fakes.anthropic_server import FakeAnthropic


def test_the_open_book_is_readied_once_a_model_is_connected(
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = read_alice(window, books_dir)
    ready = chat.first_question
    ready._timer.setInterval(10)  # not 1.5 s after the book opens
    qtbot.waitUntil(lambda: chat.book_id == book_id)
    assert book_id not in ready.warmed, "nothing before the model's client"
    run_until(qtbot, chat.warm_up())
    provider = chat.service.provider()
    assert provider._client is not None, "the client is built before the first question"
    # the book's part once its spoiler statistics are counted (the window counts them once
    # the book is drawn; here at once)
    prepare_book(window.library.db, book_id)
    qtbot.waitUntil(lambda: book_id in ready.warmed, timeout=10000)
    assert warm.stats_stored(window.library.db, book_id)
    assert chat.service.spoilers._items, "the spoiler check's index is ready"
    assert (window.paths.data / reserve.NAME).exists()
    assert fake_anthropic.requests == [], "readying asks the model nothing"


def test_passages_mode_loads_the_encoder_once_a_question_is_begun(
    window: Any, books_dir: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The book's sentences are read ahead in a worker process, so the window loads the
    sentence encoder (for the question's own words) when the reader starts typing, not at
    the reply."""
    from PySide6.QtTest import QTest

    from core.agent.providers import answer_sentence

    loaded: list[bool] = []
    monkeypatch.setattr(answer_sentence, "preload", lambda: loaded.append(True) or True)
    read_alice(window, books_dir)
    chat = window.chat
    assert window.app.mode() == "passages"
    QTest.keyClicks(chat.input, "Who")
    qtbot.waitUntil(lambda: loaded == [True], timeout=5000)
    QTest.keyClicks(chat.input, " is she?")  # more words: loaded already
    qtbot.waitUntil(lambda: not chat.first_question.readying, timeout=5000)
    chat.input.clear()
    QTest.keyClicks(chat.input, "Why")  # a new question begun
    qtbot.waitUntil(lambda: len(loaded) == 2, timeout=5000)
    QTest.qWait(50)
    assert len(loaded) == 2


def test_passages_mode_loads_the_encoder_once_text_is_selected(
    window: Any, books_dir: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selection is one click from "Ask" (a question sent without typing): it loads what
    the reply uses, one load at a time however often the selection grows meanwhile."""
    import threading

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from core.agent.providers import answer_sentence
    from tests.desktop.reader.conftest import text_view

    loaded: list[bool] = []
    release = threading.Event()

    def preload() -> bool:
        loaded.append(True)
        return release.wait(10)

    monkeypatch.setattr(answer_sentence, "preload", preload)
    read_alice(window, books_dir)
    view = text_view(window.reader)
    view.setFocus()
    QTest.qWait(50)
    assert loaded == [], "nothing loads before a question or a selection"
    for _ in range(3):  # the selection grows a character at a time
        QTest.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
        QTest.qWait(20)
    assert len(view.marks.selected_text()) == 3
    qtbot.waitUntil(lambda: loaded == [True], timeout=5000)
    ready = window.chat.first_question
    assert ready.readying, "the load is under way"
    release.set()
    qtbot.waitUntil(lambda: not ready.readying, timeout=5000)
    QTest.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: len(loaded) == 2, timeout=5000)  # a later selection: loaded again
    assert len(loaded) == 2
