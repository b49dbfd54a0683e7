"""Issue 27 item 6: a local server that ignores max_tokens can stream megabytes; the store
keeps the beginning of such an answer and says so."""

from __future__ import annotations

from pathlib import Path

from core.agent.types import AssistantMessage, CitationRef, Question, TextPart, ToolCall, Usage
from core.paths import resolve_paths
from core.store import models as m
from core.store.conversations import CUT_NOTE, MAX_ANSWER_CHARS, Conversations
from core.store.library import Library
from tests.support.answers import store_answer


def test_a_huge_answer_is_stored_cut_with_a_note(margin_home: Path) -> None:
    lib = Library.open(resolve_paths())
    store = Conversations(lib.db)
    book = m.Book.create(title="T", format="txt", sha256="d" * 64, page_count=10)
    conv = store.create(int(book.id))
    ids = store.start_run(
        conv.id, provider="local", model="m", strategy="tool-use", question=Question("q")
    )
    word = "a" * 1_000_000
    store.save_partial(ids.placeholder_id, word)
    assert len(m.Message.get_by_id(ids.placeholder_id).text) == MAX_ANSWER_CHARS
    cite = (CitationRef(int(book.id), 1, 1, "x"),)
    call = ToolCall("t1", "search_book", {"query": "x"})
    message = AssistantMessage((call, TextPart("Start. ", cite), TextPart(word)))
    store.finish(
        conversation_id=conv.id,
        ids=ids,
        status="complete",
        message=message,
        text="Start. " + word,
        citations=cite,
        steps=1,
        usage=Usage(),
        stop_reason="end_turn",
    )
    [answer] = [r for r in store.history(conv.id) if r.role == "assistant"]
    assert len(answer.text) == MAX_ANSWER_CHARS + len(CUT_NOTE)
    assert answer.text.startswith("Start. aaa") and answer.text.endswith(CUT_NOTE)
    assert answer.citations == cite
    row = m.Message.get(m.Message.kind == "answer")
    assert len(row.content) < MAX_ANSWER_CHARS + 2000, "the typed parts are cut too"
    lib.close()


def test_a_normal_answer_is_kept_whole(margin_home: Path) -> None:
    lib = Library.open(resolve_paths())
    store = Conversations(lib.db)
    book = m.Book.create(title="T", format="txt", sha256="e" * 64, page_count=10)
    conv = store.create(int(book.id))
    text = "word " * 20_000
    store_answer(store, conv.id, text, question="q")
    [answer] = [r for r in store.history(conv.id) if r.role == "assistant"]
    assert answer.text == text
    lib.close()
