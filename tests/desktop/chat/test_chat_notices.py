"""Issue 15: what the pane says when an answer is not whole — errors with their hint,
answers a crash interrupted (with Retry), and sentences hidden past the reading position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl

from core.agent.types import Question
from tests.desktop.chat.conftest import as_if_crashed, done, read_alice, use_server
from tests.fakes.anthropic_server import FakeAnthropic, Reply

LEAK = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."


def test_error_keeps_its_hint_and_names_the_server_after_reopening(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    read_alice(window, books_dir)
    fake_anthropic.add(Reply.error(500, "api_error", "boom"))
    chat.ask("Hello?")
    done(chat, qtbot)
    first = chat.transcript_text()
    conv = chat.conversation_id
    chat.new_conversation()
    chat.select_conversation(conv)
    text = chat.transcript_text()
    assert text == first, "the stored message shows the same error as the live one"
    view = next(v for v in chat.messages.views.values() if v.error is not None)
    assert view.error.hint and view.error.hint in text
    assert fake_anthropic.url in text or "local model server" in text
    assert "Retry" in text


def test_crash_interrupted_answer_shows_interrupted_and_retry(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = read_alice(window, books_dir)
    store = window.app.conversations
    conv = store.create(book_id)
    ids = store.start_run(
        conv.id,
        provider="anthropic",
        model="claude-test",
        strategy="tool-use",
        question=Question("What did the Queen say?"),
    )
    store.save_partial(ids.placeholder_id, "The Queen said")
    as_if_crashed(ids.run_id)
    assert window.app.conversations.recover_interrupted() == 1
    chat.select_conversation(conv.id)
    qtbot.waitUntil(chat.history_complete, timeout=5000)  # read on a worker thread
    text = chat.transcript_text()
    assert "Interrupted" in text and "Retry" in text and "Thinking" not in text
    assert "Press Retry to ask again." in text
    fake_anthropic.add(Reply.text("Off with their heads!"))
    key = next(k for k, v in chat.messages.views.items() if v.status == "interrupted")
    chat._link(QUrl(f"margin-action:retry/{key}"))
    done(chat, qtbot, "Off with their heads!")
    assert "Interrupted" not in chat.transcript_text()
    questions = [r.text for r in chat.service.history(conv.id) if r.role == "user"]
    assert questions == ["What did the Queen say?"]


def test_recover_on_a_worker_thread_redraws_the_pane(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    import threading

    book_id = read_alice(window, books_dir)
    store = window.app.conversations
    conv = store.create(book_id)
    ids = store.start_run(
        conv.id, provider="anthropic", model="m", strategy="tool-use", question=Question("Q?")
    )
    as_if_crashed(ids.run_id)
    chat = window.chat
    chat.select_conversation(conv.id)
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    assert "Thinking" not in chat.transcript_text() and "Not finished" in chat.transcript_text()
    thread = threading.Thread(target=chat.recover)
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: "Interrupted" in chat.transcript_text(), timeout=3000)


def test_hidden_sentence_notice_reveals_in_place_and_per_question_choice(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    read_alice(window, books_dir, page=20)
    mixed = f"Alice grows and shrinks in the hall. {LEAK} She cries a pool of tears."
    fake_anthropic.add(Reply.text(mixed, tokens_per_second=400), Reply.text(mixed))
    chat.ask("What happens?")
    done(chat, qtbot, "pool of tears")
    text = chat.transcript_text()
    assert "Knave" not in text
    assert "Hidden: this part mentions something from after p. 20 — Show anyway" in text
    key = next(k for k, v in chat.messages.views.items() if v.withheld)
    index = chat.messages.views[key].withheld[0].index
    chat._link(QUrl(f"margin-action:reveal/{key}/{index}"))
    assert LEAK in chat.transcript_text() and "Hidden:" not in chat.transcript_text()
    # the choice near the input holds for one question only
    chat.spoilers.setCurrentIndex(chat.spoilers.findData("end"))
    chat.input.setPlainText("And then?")
    chat.send()
    assert chat.spoilers.currentData() is None, "the choice is for this question only"
    done(chat, qtbot)
    last = chat.service.history(chat.conversation_id)[-1]
    assert not last.withheld and "Knave" in last.text


def test_a_held_sentence_keeps_its_start_shown_and_the_reloaded_answer_reads_the_same(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    """Issue 41: the start of a sentence shown while it was written stays; only its rest is
    held behind the notice, and the stored answer reads as the live one did."""
    chat = use_server(window, fake_anthropic, monkeypatch)
    read_alice(window, books_dir, page=20)
    start = "Alice grows and shrinks in the hall with the little golden key, "
    rest = "and then the Knave of Hearts is accused of stealing the tarts."
    fake_anthropic.add(Reply.text(start + rest, chunk_chars=4, tokens_per_second=400))
    chat.ask("What happens?")
    done(chat, qtbot, "Hidden:")
    live = chat.transcript_text()
    (item,) = chat.service.history(chat.conversation_id)[-1].withheld
    whole = start + rest
    assert whole.endswith(item.text) and "Knave" in item.text and "Alice" not in item.text
    shown = whole[: len(whole) - len(item.text)]  # how much depends on the pace and the test
    assert shown.startswith("Alice grows and ") and shown.strip() in live  # by meaning
    assert "Knave" not in live
    conv = chat.conversation_id
    chat.new_conversation()
    chat.select_conversation(conv)
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    assert chat.transcript_text() == live
    key = next(k for k, v in chat.messages.views.items() if v.withheld)
    chat._link(QUrl(f"margin-action:reveal/{key}/{item.index}"))
    assert start + rest in chat.transcript_text()
