"""Read aloud in the window, against Qt's test engine: from the selection to the next page
with the page turning by itself and each spoken sentence marked, keys for pause, resume,
stop and speed, read_to following the listening rule, an answer read aloud, a PDF without
text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QTextCursor

from core.speech.plan import page_utterances
from tests.desktop.conftest import open_alice, open_book_file

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
ALT_SHIFT = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier


@pytest.fixture(autouse=True)
def _test_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    yield


def key(qtbot: Any, window: Any, k: Qt.Key, mods: Any = CTRL_SHIFT) -> None:
    qtbot.keyClick(window.reader.view, k, mods)


def marked(window: Any) -> str:
    view = window.reader.host.text_view()
    start, end = view.marks.mark_position()
    cursor = QTextCursor(view.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    return " ".join(cursor.selectedText().split())


def test_from_the_selection_to_the_next_page(qtbot: Any, window: Any, books_dir: Path) -> None:
    open_alice(window, books_dir, page=5, read_to=5)
    parts = window.read_aloud
    speech = parts.rs.speech
    speech.set_rate(1.0)
    said: list[tuple[int, str, str]] = []
    speech.utteranceStarted.connect(lambda u: said.append((u.page, u.text, marked(window))))
    stored = window.library.page(window.reader.book.id, 5).text
    last_two = list(page_utterances(5, stored))[-2:]
    assert window.reader.host.text_view().marks.select_text(last_two[0].text.split(" (")[0][:40])
    key(qtbot, window, Qt.Key.Key_U)  # Ctrl+Shift+U: read aloud from the selection
    assert speech.state == "playing"
    qtbot.waitUntil(lambda: any(p == 6 for p, _, _ in said), timeout=20000)
    assert [t for _, t, _ in said[:2]] == [u.text for u in last_two]
    for _page, text, mark in said[:3]:
        assert text[:30] in mark or mark[:30] in text  # the sentence said is the one marked
    assert window.reader.page == 6  # the page turned by itself
    spoken = said[-1][1]
    qtbot.waitUntil(lambda: bool(parts.rs.word) and parts.rs.word in spoken, timeout=5000)
    view = window.reader.host.text_view()
    qtbot.waitUntil(  # the word said is underlined over its sentence's mark
        lambda: any(s.format.fontUnderline() for s in view.extraSelections()), timeout=5000
    )
    assert window.reader.session.read_to == 6  # page 5 was listened to its end
    key(qtbot, window, Qt.Key.Key_U)  # pause
    assert speech.state == "paused"
    key(qtbot, window, Qt.Key.Key_U)  # resume
    assert speech.state == "playing"
    rate = speech.speaker.rate
    key(qtbot, window, Qt.Key.Key_Down, ALT_SHIFT)  # slower
    assert speech.speaker.rate == pytest.approx(rate - 0.1)
    key(qtbot, window, Qt.Key.Key_Up, ALT_SHIFT)  # faster
    assert speech.speaker.rate == pytest.approx(rate)
    key(qtbot, window, Qt.Key.Key_K)  # stop
    assert speech.state == "stopped"
    assert parts.actions["toggle"].text() == "&Read aloud"


def test_a_far_jump_while_listening_does_not_count(
    qtbot: Any, window: Any, books_dir: Path
) -> None:
    open_alice(window, books_dir, page=5, read_to=5)
    speech = window.read_aloud.rs.speech
    speech.set_rate(1.0)
    pages: list[int] = []
    speech.utteranceStarted.connect(lambda u: pages.append(u.page))
    window.read_aloud.rs.toggle()
    window.reader.go_to_page(40)  # a far jump (the contents, a citation)
    stored = window.library.page(window.reader.book.id, 40).text
    last = list(page_utterances(40, stored))[-1]
    speech.play(40, last.start)  # near the end of the page jumped to
    qtbot.waitUntil(lambda: 41 in pages, timeout=20000)
    assert window.reader.page == 41 and window.reader.session.read_to == 5
    speech.stop()


def test_an_answer_read_aloud(qtbot: Any, window: Any, books_dir: Path) -> None:
    open_alice(window, books_dir, page=5)
    speech = window.read_aloud.rs.speech

    class View:
        text = "**Alice** falls down the hole. She lands on sticks <margin-cite:1/5-5>."

    said: list[str] = []
    speech.utteranceStarted.connect(lambda u: said.append(u.text))
    done = window.read_aloud.answer_link(QUrl("margin-action:speak/a1"), {"a1": View()})
    assert done and speech.state == "playing"
    qtbot.waitUntil(lambda: speech.state == "stopped", timeout=10000)
    assert said == ["Alice falls down the hole.", "She lands on sticks ."]
    assert window.reader.page == 5  # an answer marks nothing on the page


def test_a_pdf_without_text(qtbot: Any, window: Any, pdf_dir: Path, heard: list[Any]) -> None:
    open_book_file(window, pdf_dir / "imagemagick-images.pdf")
    window.read_aloud.rs.toggle()
    speech = window.read_aloud.rs.speech
    assert speech.state == "stopped"
    assert "no text to read aloud" in window.statusBar().currentMessage()
    assert any("no text to read aloud" in text for text, _ in heard)


def test_closing_the_window_stops_reading_aloud(qtbot: Any, window: Any, books_dir: Path) -> None:
    open_alice(window, books_dir, page=5)
    speech = window.read_aloud.rs.speech
    window.read_aloud.rs.toggle()
    assert speech.state == "playing"
    window.close()
    assert speech.state == "stopped"


def test_the_menu(window: Any) -> None:
    titles = [a.text() for a in window.menuBar().actions()]
    assert "Read &aloud" in titles and titles.index("Read &aloud") < titles.index("&Help")
    shortcuts = {a.shortcut().toString() for a in window.read_aloud.actions.values()}
    assert {"Ctrl+Shift+U", "Ctrl+Shift+K", "Alt+Shift+Left", "Alt+Shift+Up"} <= shortcuts


def test_answers_read_aloud_when_they_finish(qtbot: Any, window: Any, books_dir: Path) -> None:
    """The option says a finished answer once; a streaming one (still live) waits."""
    open_alice(window, books_dir, page=5)
    parts = window.read_aloud
    speech = parts.rs.speech

    class View:
        text = "The Cat grins."

    class Pane:
        live: dict[int, object] = {7: object()}

        class messages:
            last_answer = "k1"
            views = {"k1": View()}

    pane = Pane()
    assert parts.answer_finished(pane, 7) is False  # the option is off
    parts.answers.setChecked(True)
    assert parts.answer_finished(pane, 7) is False  # still streaming
    pane.live = {}
    assert parts.answer_finished(pane, 7) is True and speech.state == "playing"
    assert speech.current is not None and speech.current.text == "The Cat grins."
    assert parts.answer_finished(pane, 7) is False  # said once
    speech.stop()
