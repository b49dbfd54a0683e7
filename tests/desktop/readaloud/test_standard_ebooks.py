"""Issue 44's "done when", on a Standard Ebooks novel (A Christmas Carol, its Preface: the
shortest chapter, so Qt's test engine says the rest of it in about a second and a half):
read aloud from the caret (in the middle of the chapter: reading starts at the caret's
sentence, not at the top of the screen) to the start of the next chapter, the page turning
by itself and each sentence said marked as it is said; pause, resume, speed and stop by
keyboard; read_to by the reading rule (the chapter heard to its end counts as read, the
next one only begun does not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from core.speech.plan import page_utterances
from tests.desktop.conftest import open_book_file
from tests.desktop.readaloud.test_window import ALT_SHIFT, key, marked

PREFACE, HALF_TITLE = 4, 5  # the book's pages: the Preface; "A Christmas Carol" (next chapter)


@pytest.fixture(autouse=True)
def _test_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    yield


def test_a_chapter_read_aloud_from_the_caret_to_the_next_chapter(
    qtbot: Any, window: Any, books_dir: Path
) -> None:
    book = open_book_file(window, books_dir / "a_christmas_carol.epub", PREFACE, PREFACE)
    titles = [(e.title, e.page) for e in window.library.toc(book)]
    assert ("Preface", PREFACE) in titles and ("A Christmas Carol", HALF_TITLE) in titles
    speech = window.read_aloud.rs.speech
    speech.set_rate(1.0)  # the test engine says a word in 50 ms at the fastest
    view = window.reader.host.text_view()
    qtbot.keyClick(window.reader.view, Qt.Key.Key_F7)  # caret browsing
    assert window.reader.typography.caret_browsing
    stored = window.library.page(book, PREFACE).text
    at = stored.index("haunt")  # in "May it haunt their house pleasantly, …"
    caret = QTextCursor(view.document())
    caret.setPosition(view.flow.pos(PREFACE, at - stored[:at].count("\n\n")))
    view.setTextCursor(caret)
    said: list[tuple[int, str, str, int]] = []
    speech.utteranceStarted.connect(
        lambda u: said.append((u.page, u.text, marked(window), window.reader.page))
    )
    words: list[str] = []
    speech.wordStarted.connect(lambda *_: words.append(window.read_aloud.rs.word))

    key(qtbot, window, Qt.Key.Key_U)  # Ctrl+Shift+U: read aloud from the caret
    assert speech.state == "playing"
    qtbot.waitUntil(lambda: len(words) >= 3, timeout=10000)
    key(qtbot, window, Qt.Key.Key_U)  # pause (the engine holds at the end of its word)
    assert speech.state == "paused"
    qtbot.wait(100)
    held = len(words)
    key(qtbot, window, Qt.Key.Key_Down, ALT_SHIFT)  # slower
    assert speech.speaker.rate == pytest.approx(0.9)
    key(qtbot, window, Qt.Key.Key_Up, ALT_SHIFT)  # faster
    assert speech.speaker.rate == pytest.approx(1.0)
    qtbot.wait(150)
    assert len(words) == held, "▶ words were said while paused"
    key(qtbot, window, Qt.Key.Key_U)  # resume
    assert speech.state == "playing"
    qtbot.waitUntil(lambda: any(p == HALF_TITLE for p, *_ in said), timeout=15000)
    key(qtbot, window, Qt.Key.Key_K)  # stop, at the start of the next chapter
    assert speech.state == "stopped"

    library = window.library
    chapter = list(page_utterances(PREFACE, stored, at))
    assert chapter[0].text.startswith("May it haunt") and len(chapter) == 4
    following = next(page_utterances(HALF_TITLE, library.page(book, HALF_TITLE).text))
    assert [t for _, t, _, _ in said] == [u.text for u in chapter] + [following.text]
    for page, text, mark, shown in said:  # each sentence marked on the page shown
        assert " ".join(text.split()) == mark, (text, mark)
        assert shown == page
    assert window.reader.page == HALF_TITLE  # the page turned by itself
    assert any("haunt" in w for w in words)  # words were followed too
    # the Preface was heard to its end: read on to the next chapter; that one was only begun
    assert window.reader.session.read_to == HALF_TITLE
    count = len(said)
    qtbot.wait(100)
    assert len(said) == count and speech.state == "stopped"
