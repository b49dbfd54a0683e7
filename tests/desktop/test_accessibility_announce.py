"""What a screen reader hears without moving: a finished, failed or stopped answer, an
import, the chat's status line, and whole answers when the reader asks for them; and the
whole walk-through (turn, ask, hear, read, open a citation, highlight) with keys alone."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QApplication

from desktop import accessibility
from desktop.accessibility import first_sentence
from desktop.window.main_window import MainWindow
from tests.desktop.conftest import close_window, connect_claude
from tests.desktop.conftest import open_alice as open_book_at
from tests.fakes.anthropic_server import FakeAnthropic, Reply

KEY = "sk-ant-a11y-test-KEY"


# Alice at page 3 with the side panel shown, unless a test says otherwise
open_alice = partial(open_book_at, page=3, side=True)


def test_first_sentence_is_plain_and_short() -> None:
    assert first_sentence("The **Cheshire** cat grins. Then it fades.") == (
        "The Cheshire cat grins."
    )
    assert first_sentence("⟪hidden:0⟫ Alice falls. More.") == "Alice falls."
    assert len(first_sentence("word " * 200)) <= accessibility.LEAD_CHARS
    assert first_sentence("") == ""


@pytest.fixture
def claude(window: Any, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The window answering from the fake server."""
    return connect_claude(window, fake_anthropic, monkeypatch, KEY)


def test_a_finished_answer_is_announced(
    claude: Any, books_dir: Path, qtbot: Any, heard: Any, fake_anthropic: FakeAnthropic
) -> None:
    window = claude
    open_alice(window, books_dir, page=90, read_to=90)
    chat = window.chat
    fake_anthropic.add(Reply.text("Alice is sitting by her sister. She is bored."))
    chat.input.setFocus()
    chat.input.setPlainText("Why does the rabbit hurry?")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    polite = QAccessible.AnnouncementPoliteness.Polite
    assert ("Answer ready: Alice is sitting by her sister.", polite) in heard
    assert QApplication.focusWidget() is chat.input, "focus stays where the reader is"
    # a failure interrupts
    fake_anthropic.add(Reply.error(401, "authentication_error", "invalid x-api-key"))
    chat.ask("Hello?")
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    failed = [(t, p) for t, p in heard if t.startswith("The answer failed")]
    assert failed and failed[-1][1] == QAccessible.AnnouncementPoliteness.Assertive


def test_a_stopped_answer_is_announced(
    claude: Any, books_dir: Path, qtbot: Any, heard: Any, fake_anthropic: FakeAnthropic
) -> None:
    window = claude
    open_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.text("slow words " * 300, tokens_per_second=60, chunk_chars=5))
    chat.ask("Tell me everything")
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=10000)
    chat.stop_button.click()
    qtbot.waitUntil(lambda: not chat.live, timeout=5000)
    assert [t for t, _ in heard if t.startswith("Answer")] == ["Answer stopped."]


def test_an_import_is_announced(window: Any, books_dir: Path, qtbot: Any, heard: Any) -> None:
    task = asyncio.ensure_future(
        window.importer.import_files(
            [books_dir / "alice_in_wonderland.epub", books_dir / "test_corrupted.epub"]
        )
    )
    qtbot.waitUntil(task.done, timeout=30000)
    text, politeness = heard[-1]
    assert text.startswith("Added “") and "to your library" in text
    assert "Not added:" in text and "test_corrupted.epub" in text
    assert politeness == QAccessible.AnnouncementPoliteness.Assertive


def test_chat_status_messages_are_announced(window: Any, books_dir: Path, heard: Any) -> None:
    open_alice(window, books_dir)
    window.chat.status.setText("Answer copied.")
    window.chat.status.setText("Answer copied.")  # the same message: said once
    window.chat.status.setText("")
    assert [t for t, _ in heard] == ["Answer copied."]


def test_whole_answers_can_be_announced_and_the_choice_is_kept(
    window: Any, books_dir: Path, qtbot: Any, heard: Any, app: Any
) -> None:
    open_alice(window, books_dir, page=12, read_to=12)
    chat = window.chat
    assert not window.action_whole.isChecked()
    window.action_whole.trigger()
    try:
        chat.ask("Who is the White Rabbit?")
        qtbot.waitUntil(lambda: not chat.live, timeout=15000)
        said = [t for t, _ in heard if t.startswith("Answer ready:")][-1]
        assert len(said) > 2 * accessibility.LEAD_CHARS, "the whole answer, not its lead"
        assert "Passages" in said and "**" not in said
        again = MainWindow(app, restore=False)
        qtbot.addWidget(again)
        assert again.action_whole.isChecked(), "the choice is kept"
        close_window(qtbot, again)
    finally:
        window.action_whole.trigger()
    assert not accessibility.whole_answers


def test_keyboard_alone_turn_ask_hear_read_open_a_citation_and_highlight(
    window: Any, books_dir: Path, qtbot: Any, heard: Any
) -> None:
    """The walk-through of the issue, with keys only (passages mode: no model needed)."""
    book_id = open_alice(window, books_dir, page=10, read_to=30)
    window.panes.set_side_visible(False)
    view = window.reader.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_PageDown)  # a screen on
    shown = window.reader.page
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)  # a page on
    assert window.reader.page == shown + 1
    # ask: Ctrl+L, type, Enter; the answer is announced while focus stays in the question box
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    chat = window.chat
    assert QApplication.focusWidget() is chat.input
    qtbot.keyClicks(chat.input, "Who is the Rabbit")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    assert any(t.startswith("Answer ready:") for t, _ in heard), heard
    assert QApplication.focusWidget() is chat.input
    # read it: Shift+Tab reaches the transcript, whose text has the answer
    qtbot.keyClick(chat.input, Qt.Key.Key_Backtab)
    transcript: Any = chat.transcript
    assert transcript.hasFocus()
    text = QAccessible.queryAccessibleInterface(transcript).textInterface()
    assert "Rabbit" in text.text(0, text.characterCount())
    # open a citation: Tab goes from link to link inside the transcript, Enter opens one
    for _ in range(40):
        qtbot.keyClick(transcript, Qt.Key.Key_Tab)
        if not transcript.hasFocus():
            pytest.fail("Tab left the transcript before reaching a citation")
        if transcript.textCursor().charFormat().anchorHref().startswith("margin-cite:"):
            break
    href = transcript.textCursor().charFormat().anchorHref()
    cited = int(href.split("/")[1].split("-")[0])
    with qtbot.waitSignal(chat.requestOpenPage, timeout=3000):
        qtbot.keyClick(transcript, Qt.Key.Key_Return)
    assert window.reader.page == cited
    # highlight: back to the page, select words with Shift+arrows, Ctrl+H
    view = window.reader.view
    view.setFocus()
    for _ in range(12):
        qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert view.textCursor().hasSelection()
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(window.library.list_highlights(book_id)), timeout=5000)


def test_a_repaired_page_is_said_on_screen_too(
    window: Any, tmp_path: Path, qtbot: Any, heard: Any
) -> None:
    """Issue 45, item 8: not-well-formed XHTML, read as a browser repairs it, is said in the
    status bar as well as to screen readers."""
    from tests.core.books.epubgen import make_epub

    broken = make_epub(tmp_path / "broken.epub", [("One", "<p>An <b>unclosed paragraph.</p>")])
    task = asyncio.ensure_future(window.importer.import_files([broken]))
    qtbot.waitUntil(task.done, timeout=30000)
    assert "repaired" in heard[-1][0]
    assert "repaired" in window.statusBar().currentMessage()
