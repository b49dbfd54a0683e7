"""The chat pane with the real agent and the real SDK against the fake Anthropic server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QKeyEvent

from core.agent.providers.anthropic.wire import source_for
from core.api_key import get_api_key
from core.books.importer import import_book
from core.store import models as m
from desktop.requests import AskRequest
from tests.desktop.chat.conftest import read_alice
from tests.desktop.conftest import connect_claude
from tests.fakes.anthropic_server import FakeAnthropic, Reply, search_result_citation

KEY = "sk-ant-desktop-test-KEY-42"


@pytest.fixture
def with_claude(window: Any, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Any:
    return connect_claude(window, fake_anthropic, monkeypatch, KEY)


def test_ask_streams_answer_and_citation_moves_reader(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    book_id = read_alice(window, books_dir)
    chat = window.chat
    assert not chat.banner.isVisible()
    cite = search_result_citation(source_for(book_id, 40, 40), "p. 40", "It’s a Cheshire cat")
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire cat"}),
        Reply.text(
            "It grins because it is a **Cheshire** cat. " * 5,
            citations=[cite],
            tokens_per_second=200,
            chunk_chars=6,
        ),
    )
    chat.input.setPlainText("Why does the cat grin?")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    assert chat.input.toPlainText() == ""
    qtbot.waitUntil(lambda: "It grins because" in chat.transcript_text(), timeout=10000)
    assert chat.stop_button.isVisible(), "the answer is still streaming"
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    text = chat.transcript_text()
    assert "Why does the cat grin?" in text and "p. 40" in text
    html = chat.transcript.toHtml()
    assert ("margin-cite:" in html and "<b>Cheshire</b>" in html) or "font-weight" in html
    window.reader.go_to_page(2)
    with qtbot.waitSignal(chat.requestOpenPage, timeout=2000):
        chat._link(QUrl(f"margin-cite:{book_id}/40-40?q=It%E2%80%99s%20a%20Cheshire%20cat"))
    assert window.reader.page == 40
    assert window.reader.view.marks.marked()
    assert m.Message.get(m.Message.kind == "answer").status == "complete"
    qtbot.waitUntil(  # titles are read on a worker thread
        lambda: chat.conversations.currentText().startswith("Why does the cat grin?"), timeout=5000
    )


def test_shift_enter_is_a_new_line(with_claude: Any, books_dir: Path, qtbot: Any) -> None:
    read_alice(with_claude, books_dir)
    box = with_claude.chat.input
    box.setPlainText("line one")
    box.moveCursor(box.textCursor().MoveOperation.End)
    event = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    box.keyPressEvent(event)
    assert box.toPlainText() == "line one\n"
    assert not with_claude.chat.live


def test_stop_mid_stream_keeps_partial_marked_stopped(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.text("slow words " * 300, tokens_per_second=60, chunk_chars=5))
    chat.input.setPlainText("Tell me everything")
    chat.send()
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=10000)
    import time

    started = time.perf_counter()
    chat.stop_button.click()
    qtbot.waitUntil(lambda: not chat.live, timeout=3000)
    assert time.perf_counter() - started < 1.0
    assert "Stopped." in chat.transcript_text()
    answer = m.Message.get(m.Message.kind == "answer")
    assert answer.status == "stopped" and answer.text.startswith("slow words")


def test_overloaded_error_shows_message_and_retry_works(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.stream_error("Half an ans"), Reply.text("A complete answer."))
    chat.input.setPlainText("What is the Caucus-race?")
    chat.send()
    qtbot.waitUntil(lambda: not chat.live and "overloaded" in chat.transcript_text(), timeout=10000)
    assert "Retry" in chat.transcript_text()
    failed_key = next(k for k, v in chat.messages.views.items() if v.error is not None)
    chat._link(QUrl(f"margin-action:retry/{failed_key}"))
    qtbot.waitUntil(
        lambda: not chat.live and "A complete answer." in chat.transcript_text(), timeout=10000
    )
    assert "overloaded" not in chat.transcript_text()
    questions = [r.text for r in chat.service.history(chat.conversation_id) if r.role == "user"]
    assert questions == ["What is the Caucus-race?"], "the retried question is not duplicated"


def test_bad_key_offers_settings(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.error(401, "authentication_error", "invalid x-api-key"))
    chat.ask("Hello?")
    qtbot.waitUntil(
        lambda: not chat.live and "did not accept the API key" in chat.transcript_text(),
        timeout=10000,
    )
    assert "margin-action:settings" in chat.transcript.toHtml()
    with qtbot.waitSignal(chat.requestSettings, timeout=1000):
        chat._link(QUrl("margin-action:settings"))


def test_two_conversations_stream_at_once(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(
        Reply.text("first " * 80, tokens_per_second=100),
        Reply.text("second " * 80, tokens_per_second=100),
    )
    a = chat.ask("Question one")
    # the server hands out its replies in the order requests arrive
    qtbot.waitUntil(lambda: len(fake_anthropic.message_requests) == 1, timeout=5000)
    chat.new_conversation()
    b = chat.ask("Question two")
    assert a != b and len(chat.live) == 2
    qtbot.waitUntil(chat.history_complete, timeout=5000)  # the list is read on a worker
    chat.conversations.setCurrentIndex(
        chat.conversations.findData(a)
    )  # switching never loses a running answer
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    answers = {
        r.conversation_id: r.text for r in m.Message.select().where(m.Message.kind == "answer")
    }
    assert answers[a].startswith("first") and answers[b].startswith("second")
    assert "first first" in chat.transcript_text()


def test_quick_action_sends_at_once_with_selection(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    book_id = read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.text("It means to grin widely."))
    chat.handle_ask(AskRequest(book_id, 40, "grinning from ear to ear", "ask"))
    assert chat.card.isVisible() and "p. 40" in chat.card_text.text()
    assert not chat.live, "Ask… waits for the typed question"
    window.requestAsk.emit(
        AskRequest(
            book_id,
            40,
            "grinning from ear to ear",
            "explain",
            "Explain this: grinning from ear to ear",
        )
    )
    qtbot.waitUntil(
        lambda: not chat.live and "grin widely" in chat.transcript_text(), timeout=10000
    )
    sent = fake_anthropic.message_requests[-1].body["messages"][-1]["content"][0]["text"]
    assert '<book_text kind="selection" pages="40-40">' in sent and "Explain this" in sent
    question = m.Message.get(m.Message.kind == "question")
    assert (question.selection_text, question.selection_page) == ("grinning from ear to ear", 40)
    assert not chat.card.isVisible()


def test_passages_mode_without_key(window: Any, books_dir: Path, qtbot: Any) -> None:
    assert get_api_key() is None
    read_alice(window, books_dir)
    chat = window.chat
    assert chat.banner.isVisible()
    with qtbot.waitSignal(chat.requestSettings, timeout=1000):
        chat.connect_button.click()
    chat.ask("Who is the Cheshire Cat?")
    qtbot.waitUntil(lambda: not chat.live, timeout=10000)
    text = chat.transcript_text()
    assert "From the book" in text and "Cheshire" in text
    assert "margin-cite:" in chat.transcript.toHtml()


def test_settings_dialog_saves_key_in_keyring_not_in_files(
    window: Any, margin_home: Path, qtbot: Any
) -> None:
    from desktop.window.settings_dialog import SettingsDialog
    from tests.support.memory_keyring import MemoryKeyring

    dialog = SettingsDialog(window.paths, window)
    qtbot.addWidget(dialog)
    dialog.provider.setCurrentIndex(dialog.provider.findData("anthropic"))
    dialog.key.setText(KEY)
    dialog.model.setCurrentText("claude-test-model")
    dialog.turns.setValue(5)
    with qtbot.waitSignal(dialog.settingsChanged, timeout=1000):
        assert dialog.save()
    assert get_api_key() == KEY
    assert ("Margin", "anthropic-api-key") in MemoryKeyring._store
    window.chat.settings_changed()
    assert window.chat.service.settings.model == "claude-test-model"
    assert window.chat.service.settings.limits.max_turns == 5
    assert not window.chat.banner.isVisible()
    for path in margin_home.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_settings_dialog_test_connection_and_models(
    window: Any, fake_anthropic: FakeAnthropic, qtbot: Any
) -> None:
    from desktop.window.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.paths, window)
    qtbot.addWidget(dialog)
    dialog.provider.setCurrentIndex(dialog.provider.findData("local"))
    dialog.base_url.setText(fake_anthropic.url)
    task = dialog._start(dialog._test())
    qtbot.waitUntil(task.done, timeout=15000)
    assert "2 models" in dialog.result_label.text()
    task = dialog._start(dialog._list_models())
    qtbot.waitUntil(task.done, timeout=15000)
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == [
        "claude-test",
        "claude-other",
    ]
    dialog.base_url.setText("ftp://nope")
    assert not dialog.save()
    assert "http://" in dialog.result_label.text()


def test_notes_panel_lists_edits_and_exports(window: Any, books_dir: Path, qtbot: Any) -> None:
    from desktop.highlights.notes_panel import NotesPanel

    book_id = read_alice(window, books_dir)
    window.library.add_note(book_id, "The Cat can vanish.", page=42, source="agent")
    window.library.add_highlight(book_id, 3, "ORANGE MARMALADE", note="jar")
    panel = NotesPanel(window.library)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.filled, timeout=5000):  # read on a worker thread
        panel.set_book(book_id)
    texts = [panel.items.item(i).text() for i in range(panel.items.count())]
    assert any("Saved by the assistant, p. 42" in t for t in texts)
    assert any("ORANGE MARMALADE" in t for t in texts)
    md = panel.markdown()
    assert "ORANGE MARMALADE" in md and "The Cat can vanish." in md
    with qtbot.waitSignal(panel.requestOpenPage, timeout=1000) as blocker:
        panel._go(panel.items.item(1))
    assert blocker.args[0].page == 3


def test_chat_run_survives_switching_books(
    with_claude: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any
) -> None:
    window = with_claude
    alice_id = read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.text("still here " * 50, tokens_per_second=200))
    conv = chat.ask("Long question")
    other = import_book(window.library, books_dir / "metamorphosis.txt").book
    window.open_book(other.id)
    assert chat.book_id == other.id
    qtbot.waitUntil(lambda: not chat.live, timeout=15000)
    answer = m.Message.get((m.Message.kind == "answer") & (m.Message.conversation == conv))
    assert answer.status == "complete" and answer.text.startswith("still here")
    window.open_book(alice_id)
    qtbot.waitUntil(chat.history_complete, timeout=5000)  # read on a worker thread
    assert chat.conversation_id == conv
    assert "still here" in chat.transcript_text()


@pytest.mark.parametrize("what", ["conversation", "book"])
def test_deleting_during_an_answer_stops_the_answer_first(
    with_claude: Any, books_dir: Path, fake_anthropic: FakeAnthropic, qtbot: Any, what: str
) -> None:
    """Delete (or Remove book) while an answer streams: the answer stops and saves what it
    wrote first, then the conversation or book goes; nothing fails or hangs."""
    window = with_claude
    book_id = read_alice(window, books_dir)
    chat = window.chat
    fake_anthropic.add(Reply.text("slowly " * 300, tokens_per_second=50))
    conversation = chat.ask("Take your time")
    qtbot.waitUntil(lambda: "slowly" in chat.transcript_text(), timeout=10000)
    assert chat.answering(conversation_id=conversation)
    if what == "conversation":
        chat.delete_conversation()
    else:
        window.books.remove_book(book_id)
    qtbot.waitUntil(lambda: not chat.live, timeout=10000)
    if what == "conversation":
        qtbot.waitUntil(
            lambda: not m.Conversation.select().where(m.Conversation.id == conversation).exists(),
            timeout=5000,
        )
    else:
        qtbot.waitUntil(lambda: window.library.list_books() == [], timeout=5000)
    assert not m.Run.select().where(m.Run.status == "running").exists()
