"""Issue 15: where an answer comes from — quick actions as the reader says them, page chips
and Sources for every provider, and the label on an answer not checked against the book."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from PySide6.QtCore import QUrl

from core.agent.providers.anthropic.wire import source_for
from core.store import models as m
from desktop.requests import AskRequest
from tests.desktop.chat.conftest import done, read_alice, use_server
from tests.fakes.anthropic_server import FakeAnthropic, Reply, search_result_citation


def test_quick_action_reads_as_the_reader_says_it(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    book_id = read_alice(window, books_dir)
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


def test_local_server_page_labels_become_chips_and_sources_list_passages(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    book_id = read_alice(window, books_dir)
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Cheshire cat grin"}),
        Reply.text("It is a Cheshire cat, said the Duchess, and that is why it grins [p. 40]."),
    )
    chat.ask("Why does the cat grin?")
    done(chat, qtbot, "that is why it grins")
    html = chat.transcript.toHtml()
    assert "margin-cite:" in html and "p. 40" in chat.transcript_text()
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
    book_id = read_alice(window, books_dir)
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
    assert window.reader.page == 40 and window.reader.view.marks.marked()


def test_passages_mode_chips_and_sources(window: Any, books_dir: Path, qtbot: Any) -> None:
    read_alice(window, books_dir)
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


def test_answer_without_the_book_is_labelled_and_can_be_asked_from_the_book(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch, provider="local")
    read_alice(window, books_dir)
    fake_anthropic.add(
        Reply.text("From memory: the Cat is a cat."),
        Reply.text("From the book: it is a Cheshire cat, said the Duchess [p. 40]."),
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
