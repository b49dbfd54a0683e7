"""Issue 15: the transcript grows incrementally — only the live answer repaints, history is
read once and on a worker thread, a reader scrolled up stays there, and a huge answer shows
its beginning first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl

from tests.desktop.chat.conftest import done, earlier_answers, use_server
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.support.answers import store_answer


def test_streaming_repaints_only_the_live_answer_and_reads_history_once(
    window: Any, fake_anthropic: FakeAnthropic, books_dir: Path, qtbot: Any, monkeypatch: Any
) -> None:
    chat = use_server(window, fake_anthropic, monkeypatch)
    conv = earlier_answers(window, books_dir, 20)
    chat.select_conversation(conv)
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
    assert f"live-{conv}#0" in live_frames, "finished paragraphs are rendered apart"
    done(chat, qtbot, "Paragraph 29 of")
    assert reads == [conv], "the store is read once, when the answer ends, not per tick"
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
    chat.select_conversation(earlier_answers(window, books_dir, 8))
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


def test_history_is_read_on_a_worker_thread(window: Any, books_dir: Path, qtbot: Any) -> None:
    import threading

    conv = earlier_answers(window, books_dir, 2)
    chat = window.chat
    threads: list[str] = []
    original = chat.service.history

    def history(conversation_id: int) -> Any:
        threads.append(threading.current_thread().name)
        return original(conversation_id)

    chat.service.history = history
    chat.select_conversation(conv)
    assert not chat.history_complete(), "the pane waits for the worker"
    qtbot.waitUntil(chat.history_complete, timeout=5000)
    assert "Earlier answer 1." in chat.transcript_text()
    assert threads and threading.main_thread().name not in threads


def test_a_huge_answer_shows_its_beginning_and_all_of_it_on_request(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    """Issue 27 item 6: a 1 MB one-word answer (a local server ignoring max_tokens) and a
    3,000-row table froze the window for minutes when the book opened."""
    from desktop.chat.render import SHOWN_CHARS

    conv = earlier_answers(window, books_dir, 0)
    chat = window.chat
    store_answer(window.app.conversations, conv, "w" * 1_000_000)
    table = "| row | value |\n|---|---|\n" + "".join(f"| r{i} | v{i} |\n" for i in range(3000))
    store_answer(window.app.conversations, conv, table)
    chat.select_conversation(conv)
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
