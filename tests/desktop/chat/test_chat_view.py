"""Issue 15: the chat pane as a conversation view — incremental transcript, quick actions as
the reader says them, sources everywhere, grounding label, errors with hints, interrupted
answers, spoiler notices, keys, export, cost meter and a legible dark theme. Real window,
real store, real SDK against the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QMessageBox

from core.agent.providers.anthropic.wire import source_for
from core.agent.service import AgentService, make_provider
from core.agent.types import Question
from core.books.importer import import_book
from core.settings import Settings
from core.store import models as m
from desktop.chat.render import Colours
from desktop.requests import AskRequest
from tests.desktop.conftest import close_window, open_window
from tests.fakes.anthropic_server import FakeAnthropic, Reply, search_result_citation

KEY = "sk-ant-desktop-test-KEY-15"
LEAK = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."


@pytest.fixture
def window(app: Any, qtbot: Any, real_font: str) -> Any:
    win = open_window(app, qtbot, (1200, 800))
    yield win
    close_window(qtbot, win)


def use_server(window: Any, fake: FakeAnthropic, monkeypatch: Any, **settings: Any) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    values: dict[str, Any] = {"provider": "anthropic", "base_url": fake.url, "model": "claude-test"}
    values.update(settings)
    window.app.agent = AgentService(
        window.library,
        window.paths,
        Settings(**values),
        provider_factory=lambda s, k: make_provider(s, k, max_retries=0, timeout=5.0),
        retry_delay=0.01,
        conversations=window.app.conversations,
        search=window.app.search,
        executor=window.app.executor,
    )
    window.chat._update_banner()
    return window.chat


def open_alice(window: Any, books_dir: Path, page: int = 45) -> int:
    book = import_book(window.library, books_dir / "alice_in_wonderland.epub").book
    window.library.set_position(book.id, page)
    window.refresh_library()
    window.open_book(book.id, page)
    return int(book.id)


def done(chat: Any, qtbot: Any, text: str = "", timeout: int = 15000) -> None:
    try:
        qtbot.waitUntil(
            lambda: not chat.live and (not text or text in chat.transcript_text()),
            timeout=timeout,
        )
    except Exception:
        print("live:", chat.live, "\ntranscript:", chat.transcript_text(), chat.status.text())
        raise


def seed_answers(window: Any, conversation_id: int, book_id: int, count: int) -> None:
    from core.agent.types import AssistantMessage, TextPart, Usage

    store = window.app.conversations
    for i in range(count):
        ids = store.start_run(
            conversation_id,
            provider="anthropic",
            model="claude-sonnet-4-6",
            strategy="tool-use",
            question=Question(f"Earlier question {i}?"),
        )
        text = f"Earlier answer {i}. " + "Alice sat by her sister on the bank. " * 40
        store.finish(
            conversation_id=conversation_id,
            ids=ids,
            status="complete",
            message=AssistantMessage((TextPart(text),)),
            text=text,
            citations=(),
            steps=1,
            usage=Usage(1000, 500),
            stop_reason="end_turn",
        )


# -- incremental transcript -------------------------------------------------------------------


def as_if_crashed(run_id: int) -> None:
    """The process that was writing this run is gone (Margin only marks such runs
    interrupted, never another live process's answer)."""
    import subprocess
    import sys

    from core.store import models as m

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    m.Run.update(pid=gone.pid).where(m.Run.id == run_id).execute()


def test_streaming_repaints_only_the_live_answer_and_reads_history_once(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = open_alice(window, books_dir)
    conv = chat.service.create_conversation(book_id)
    seed_answers(window, conv.id, book_id, 20)
    chat.select_conversation(conv.id)
    assert len(chat.transcript.frame_keys()) < 40, "older messages come a few at a time"
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    before = chat.transcript.frame_keys()
    assert len(before) == 40
    assert before == [s.key for s in chat.messages.shown], "in order: older ones went above"
    text = chat.transcript_text()
    positions = [text.index(f"Earlier question {i}?") for i in range(20)]
    assert positions == sorted(positions)
    marks = {k: chat.transcript._starts[k] for k in before}
    reads: list[int] = []
    original = chat.service.history
    monkeypatch.setattr(chat.service, "history", lambda cid: reads.append(cid) or original(cid))
    paragraphs = "\n\n".join(f"Paragraph {i} of a long answer with words." for i in range(30))
    fake_anthropic.add(Reply.text(paragraphs, tokens_per_second=300, chunk_chars=8))
    chat.input.setPlainText("Tell me more")
    chat.send()
    qtbot.waitUntil(lambda: "Paragraph 3 " in chat.transcript_text(), timeout=10000)
    live_frames = [k for k in chat.transcript.frame_keys() if k.startswith("live-")]
    assert f"live-{conv.id}#0" in live_frames, "finished paragraphs are rendered apart"
    done(chat, qtbot, "Paragraph 29 of")
    assert reads == [conv.id], "the store is read once, when the answer ends, not per tick"
    after = chat.transcript.frame_keys()
    assert after[:40] == before, "earlier messages are never re-inserted"
    assert all(chat.transcript._starts[k] is marks[k] for k in before)
    assert not any(k.startswith("live-") for k in after)
    assert chat.transcript_text().count("Paragraph 29 of") == 1
    bar = chat.transcript.verticalScrollBar()
    assert bar.value() == bar.maximum(), "the finished answer is scrolled into view"
    assert "Regenerate" not in chat.messages.render_answer(chat.messages.views[before[-1]])


def test_reader_scrolled_up_is_not_pulled_down(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = open_alice(window, books_dir)
    conv = chat.service.create_conversation(book_id)
    seed_answers(window, conv.id, book_id, 8)
    chat.select_conversation(conv.id)
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    fake_anthropic.add(Reply.text("word " * 400, tokens_per_second=150, chunk_chars=10))
    chat.ask("Go on")
    qtbot.waitUntil(lambda: "word word" in chat.transcript_text(), timeout=10000)
    bar = chat.transcript.verticalScrollBar()
    bar.setValue(0)
    qtbot.wait(300)
    assert chat.live and bar.value() == 0
    done(chat, qtbot)
    assert bar.value() == 0


# -- quick actions ----------------------------------------------------------------------------


def test_quick_action_reads_as_the_reader_says_it(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.text("slow " * 200, tokens_per_second=100),
        Reply.text("It means to smile widely."),
    )
    chat.input.setPlainText("A long question")
    chat.send()
    qtbot.waitUntil(lambda: len(fake_anthropic.message_requests) == 1, timeout=5000)
    busy = chat.conversation_id
    template = "Explain this passage in plain words for a reader: grinning from ear to ear"
    window.requestAsk.emit(AskRequest(book_id, 40, "grinning from ear to ear", "explain", template))
    assert chat.input.toPlainText() == "", "a quick action never lands in the question box"
    assert chat.conversation_id != busy and len(chat.live) == 2
    done(chat, qtbot)
    shown = "Explain · “grinning from ear to ear” (p. 40)"
    assert shown in chat.transcript_text()
    assert template not in chat.transcript_text()
    title = chat.service.get_conversation(chat.conversation_id).title
    assert title.startswith("Explain · “grinning")
    sent = json.dumps(fake_anthropic.message_requests[-1].body["messages"])
    assert "Explain this passage in plain words" in sent
    question = m.Message.get(
        (m.Message.kind == "question") & (m.Message.conversation == chat.conversation_id)
    )
    assert question.text == shown and question.selection_page == 40


# -- sources ------------------------------------------------------------------------------------


def test_local_server_page_labels_become_chips_and_sources_list_passages(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    book_id = open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire cat grin"}),
        Reply.text("The Cat grins and vanishes [p. 39]."),
    )
    chat.ask("Why does the cat grin?")
    done(chat, qtbot, "vanishes")
    html = chat.transcript.toHtml()
    assert "margin-cite:" in html and "p. 39" in chat.transcript_text()
    key = next(k for k, v in chat.messages.views.items() if v.tool_calls)
    chat._link(QUrl(f"margin-action:sources/{key}"))
    text = chat.transcript_text()
    assert "Searched for “Cheshire cat grin”" in text
    passages = chat.messages.views[key].passages
    assert passages and passages[0].label in text and passages[0].quote[:30] in text
    # a passage's chip opens its page with the exact quote (no added ellipses)
    with qtbot.waitSignal(chat.requestOpenPage, timeout=2000) as blocker:
        first = passages[0]
        chat._link(QUrl(f"margin-cite:{book_id}/{first.first_page}-{first.last_page}?q=x"))
    assert blocker.args[0].page == first.first_page
    hrefs = [h for h in html.split('href="')[1:] if h.startswith("margin-cite:")]
    for h in hrefs:
        quote = unquote(h.split('"')[0].split("?q=", 1)[1])
        assert not quote.startswith("…") and not quote.endswith("…")


def test_native_citation_chip_marks_the_quote(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = open_alice(window, books_dir)
    cite = search_result_citation(source_for(book_id, 40, 40), "p. 40", "It’s a Cheshire cat")
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire"}),
        Reply.text("Because it is a Cheshire cat.", citations=[cite]),
    )
    chat.ask("Why?")
    done(chat, qtbot, "Because it is")
    href = next(h for h in chat.transcript.toHtml().split('href="') if h.startswith("margin-cite"))
    window.reader.go_to_page(2)
    chat._link(QUrl(href.split('"')[0].replace("&amp;", "&")))
    assert window.reader.page == 40 and window.reader.view.marked()


def test_passages_mode_chips_and_sources(window: Any, books_dir: Path, qtbot: Any) -> None:
    open_alice(window, books_dir)
    chat = window.chat
    chat.ask("Who is the Cheshire Cat?")
    done(chat, qtbot)
    assert "margin-cite:" in chat.transcript.toHtml()
    key = next(iter(chat.messages.views))
    view = chat.messages.views[key]
    assert view.citations and view.passages
    assert "Not checked against the book" not in chat.transcript_text()
    chat._link(QUrl(f"margin-action:sources/{key}"))
    assert view.passages[0].label in chat.transcript_text()


# -- grounding ----------------------------------------------------------------------------------


def test_answer_without_the_book_is_labelled_and_can_be_asked_from_the_book(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.text("From memory: the Cat is a cat."),
        Reply.text("Cheshire Cat grin"),  # always-retrieve: the model's search words
        Reply.text("From the book: the Cat grins [p. 39]."),
    )
    chat.ask("Who is the Cat?")
    done(chat, qtbot, "From memory")
    assert "Not checked against the book" in chat.transcript_text()
    assert "Always search the book first…" in chat.transcript_text()  # local: Settings offer
    key = next(k for k in chat.messages.views)
    chat._link(QUrl(f"margin-action:ground/{key}"))
    done(chat, qtbot, "From the book")
    assert "Not checked against the book" not in chat.transcript_text()
    assert "From memory" not in chat.transcript_text()
    assert m.Run.select().order_by(m.Run.id.desc()).first().strategy == "always-retrieve"
    sent = json.dumps(fake_anthropic.message_requests[-1].body["messages"])
    assert "book_text" in sent, "always-retrieve put passages into the question"
    assert "margin-cite:" in chat.transcript.toHtml()


# -- errors and crashes -------------------------------------------------------------------------


def test_error_keeps_its_hint_and_names_the_server_after_reopening(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    open_alice(window, books_dir)
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
    book_id = open_alice(window, books_dir)
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

    book_id = open_alice(window, books_dir)
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


# -- spoilers -------------------------------------------------------------------------------------


def test_hidden_sentence_notice_reveals_in_place_and_per_question_choice(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    open_alice(window, books_dir, page=20)
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


# -- keys, conversations, cost --------------------------------------------------------------------


def test_escape_stops_and_ctrl_n_reuses_an_empty_conversation(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = open_alice(window, books_dir)
    fake_anthropic.add(Reply.text("slow words " * 300, tokens_per_second=60, chunk_chars=5))
    chat.input.setPlainText("Tell me everything")
    chat.send()
    qtbot.waitUntil(lambda: "slow words" in chat.transcript_text(), timeout=10000)
    assert chat.stop_button.isVisible() and not chat.send_button.isVisible()
    chat.input.setFocus()
    qtbot.keyClick(chat.input, Qt.Key.Key_Escape)
    done(chat, qtbot, "Stopped.", timeout=3000)
    assert "Writing…" not in chat.transcript_text() and "Thinking…" not in chat.transcript_text()
    before = len(chat.service.list_conversations(book_id))
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    empty = chat.conversation_id
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert chat.conversation_id == empty
    assert len(chat.service.list_conversations(book_id)) == before + 1


def test_activity_line_is_single_and_current(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Queen"}),
        Reply.text("The Queen shouts. " * 80, tokens_per_second=150),
    )
    chat.ask("Who shouts?")
    qtbot.waitUntil(lambda: "The Queen shouts." in chat.transcript_text(), timeout=10000)
    text = chat.transcript_text()
    assert "Searching" not in text, "the tool line is gone once the answer is written"
    assert text.count("Writing…") == 1 and chat.status.text() == ""
    done(chat, qtbot)


def test_cost_meter_and_budget_warning(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, model="claude-sonnet-4-6")
    open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.text("One.", usage={"input_tokens": 200000, "output_tokens": 1000}),
    )
    chat.ask("First?")
    done(chat, qtbot, "One.")
    label = chat.cost.text()
    assert "This conversation: 201.0k tokens (~$" in label and "This book: 201.0k tokens" in label
    chat.service.update_settings(
        Settings(
            provider="anthropic",
            base_url=fake_anthropic.url,
            model="claude-sonnet-4-6",
            budget_per_book_usd=0.5,
        )
    )
    asked: list[str] = []
    monkeypatch.setattr(
        QMessageBox,
        "question",
        staticmethod(lambda _p, _t, text, *a: asked.append(text) or QMessageBox.StandardButton.No),
    )
    requests = len(fake_anthropic.message_requests)
    assert chat.ask("Second?") is None
    assert asked and "$0.50" in asked[0] and "budget" in chat.status.text()
    assert len(fake_anthropic.message_requests) == requests and not chat.live


# -- export and look ------------------------------------------------------------------------------


def test_export_conversation_from_the_pane(
    window: Any,
    fake_anthropic: FakeAnthropic,
    books_dir: Path,
    qtbot: Any,
    monkeypatch: Any,
    tmp_path: Path,
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    open_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire cat"}),
        Reply.text("It grins [p. 40]."),
    )
    chat.ask("Why the grin?")
    done(chat, qtbot, "It grins")
    text = chat.export_conversation(tmp_path / "c.md").read_text(encoding="utf-8")
    assert "**Question:** Why the grin?" in text and "It grins [p. 40]." in text
    assert "- p. 40: “" in text
    book = chat.export_book(tmp_path / "b.md").read_text(encoding="utf-8")
    assert "Why the grin?" in book and "conversations" in book


def test_dark_palette_keeps_text_legible(window: Any, books_dir: Path, qtbot: Any) -> None:
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#252526"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e6e6e6"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#3a6ea5"))
    dark.setColor(QPalette.ColorRole.Link, QColor("#3a8ee6"))
    colours = Colours.from_palette(dark)
    for fg in (colours.text, colours.muted, colours.quote, colours.chip_fg, colours.link):
        assert QColor(fg).lightness() - QColor(colours.question_bg).lightness() > 60, fg
    open_alice(window, books_dir)
    chat = window.chat
    chat.setPalette(dark)
    assert chat.messages.colours == colours
    assert "color: #e6e6e6" in chat.transcript.document().defaultStyleSheet()
    light = Colours.from_palette(QPalette(QColor("#efefef")))
    assert QColor(light.text).lightness() < QColor(light.question_bg).lightness()


def test_settings_offer_search_first_for_local_models_and_a_budget(window: Any, qtbot: Any) -> None:
    from core.errors import MarginError
    from core.settings import load_settings
    from desktop.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.paths, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.provider.setCurrentIndex(dialog.provider.findData("anthropic"))
    assert not dialog.strategy_note.isVisible()
    dialog.provider.setCurrentIndex(dialog.provider.findData("local"))
    assert dialog.strategy_note.isVisible()
    assert "never searches the book" in dialog.strategy_note.text()
    dialog.use_retrieve.click()
    assert dialog.strategy.currentData() == "always-retrieve"
    dialog.budget.setValue(2.5)
    assert dialog.save()
    saved = load_settings(window.paths)
    assert saved.strategy == "always-retrieve" and saved.budget_per_book_usd == 2.5
    window.paths.settings_file.write_text("budget_per_book_usd = -3\n", encoding="utf-8")
    with pytest.raises(MarginError, match=r"budget_per_book_usd.*0 or more"):
        load_settings(window.paths)
    window.paths.settings_file.write_text('budget_per_book_usd = "lots"\n', encoding="utf-8")
    with pytest.raises(MarginError, match="an amount in US dollars"):
        load_settings(window.paths)


def test_history_is_read_on_a_worker_thread(window: Any, books_dir: Path, qtbot: Any) -> None:
    import threading

    book_id = open_alice(window, books_dir)
    chat = window.chat
    conv = chat.service.create_conversation(book_id)
    seed_answers(window, conv.id, book_id, 2)
    threads: list[str] = []
    original = chat.service.history

    def history(conversation_id: int) -> Any:
        threads.append(threading.current_thread().name)
        return original(conversation_id)

    chat.service.history = history
    chat.select_conversation(conv.id)
    assert not chat.history_complete(), "the pane waits for the worker"
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    assert "Earlier answer 1." in chat.transcript_text()
    assert threads and threading.main_thread().name not in threads


def seed_answer(window: Any, conversation_id: int, text: str) -> None:
    from core.agent.types import AssistantMessage, TextPart, Usage

    store = window.app.conversations
    ids = store.start_run(
        conversation_id,
        provider="local",
        model="m",
        strategy="tool-use",
        question=Question("Go on?"),
    )
    store.finish(
        conversation_id=conversation_id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart(text),)),
        text=text,
        citations=(),
        steps=1,
        usage=Usage(),
        stop_reason="end_turn",
    )


def test_a_huge_answer_shows_its_beginning_and_all_of_it_on_request(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    """Issue 27 item 6: a 1 MB one-word answer (a local server ignoring max_tokens) and a
    3,000-row table froze the window for minutes when the book opened."""
    from desktop.chat.render import SHOWN_CHARS

    book_id = open_alice(window, books_dir)
    chat = window.chat
    conv = chat.service.create_conversation(book_id)
    seed_answer(window, conv.id, "w" * 1_000_000)
    table = "| row | value |\n|---|---|\n" + "".join(f"| r{i} | v{i} |\n" for i in range(3000))
    seed_answer(window, conv.id, table)
    chat.select_conversation(conv.id)
    qtbot.waitUntil(chat.history_complete, timeout=10000)
    text = chat.transcript_text()
    assert len(text) < 3 * SHOWN_CHARS, "only the beginning of each answer is drawn"
    assert text.count("Show all") == 2 and "r10 " in text.replace("\n", " ")
    assert "r2999" not in text
    word, rows = (k for k, v in chat.messages.views.items())
    assert len(chat.messages.views[word].text) < 201_000, "the store kept 200,000 characters"
    chat._link(QUrl(f"margin-action:all/{rows}"))
    assert not chat.messages.all_shown(rows), "drawn a piece per event-loop turn"
    qtbot.waitUntil(lambda: chat.messages.all_shown(rows), timeout=20000)
    text = chat.transcript_text()
    assert "r2999" in text and text.count("Show all") == 1
    assert chat.transcript.document().toHtml().count("<table") >= 20, "every piece a table"
    chat._link(QUrl(f"margin-action:trace/{rows}"))  # its links, now last, still work
    assert chat.transcript_text().count("Hide trace") == 1
    assert chat.transcript_text().rindex("Hide trace") > chat.transcript_text().index("r2999")
