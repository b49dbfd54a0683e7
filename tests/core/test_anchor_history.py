"""After a re-read, the history the model re-reads names the new pages: the passages the
tools returned, the answer's citations and its page labels move with their words (the real
SDK against the fake server; a book first cut into pages by an "older version")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.events import RunFinished
from core.agent.providers.anthropic.wire import source_for
from core.agent.service import AgentService
from core.books import parse as parse_module
from core.books.importer import import_book, reimport_book
from core.domain.messages import (
    AssistantMessage,
    CitationRef,
    Question,
    TextPart,
    ToolCall,
    Usage,
)
from core.labels import pages_label
from core.search import BookSearch
from core.store import models as m
from core.store.anchors import collapse
from core.store.conversations import Conversations
from core.store.library import Library
from tests.core.agent.conftest import make_service
from tests.fakes.anthropic_server import FakeAnthropic, Reply, search_result_citation

__all__ = ["make_service"]

OLD_TARGET = 1400  # an "older version" cut pages of about 1,400 characters
QUERY = "Caterpillar hookah"


def _old_import(library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    with monkeypatch.context() as patch:
        patch.setattr(parse_module, "PAGE_TARGET", OLD_TARGET)
        book_id = import_book(library, books_dir / "alice_in_wonderland.txt").book.id
    library.set_position(book_id, 60)
    return book_id


def _ask(service: AgentService, conversation_id: int, text: str) -> list[Any]:
    async def collect() -> list[Any]:
        return [e async for e in service.ask(conversation_id, text)]

    return asyncio.run(collect())


def _page_of(library: Library, book_id: int, words: str) -> int:
    for number, text in library.page_texts(book_id):
        if words in collapse(text):
            return number
    raise AssertionError(f"not in the book: {words!r}")


def _search_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for b in inner if isinstance(inner, list) else []:
                if b.get("type") == "search_result":
                    out.append(b)
    return out


def test_the_request_after_a_reread_names_the_new_pages(
    make_service: Any,
    library: Library,
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book_id = _old_import(library, books_dir, monkeypatch)
    [hit, *_] = BookSearch(library.db).search_book(book_id, QUERY, limit=5, until_page=60)
    words = collapse(hit.text)
    quote = words[200:260].rsplit(" ", 1)[0]
    old_first, old_last = hit.start_page, hit.end_page
    service = make_service()
    conv = service.create_conversation(book_id)
    cite = search_result_citation(source_for(book_id, old_first, old_last), "p.", quote)
    fake_anthropic.add(
        Reply.tools(("search_book", {"query": QUERY})),
        Reply.text("The Caterpillar smokes a hookah.", citations=[cite]),
    )
    assert isinstance(_ask(service, conv.id, "What does the Caterpillar smoke?")[-1], RunFinished)
    old_source = source_for(book_id, old_first, old_last)
    assert old_source in [
        b["source"] for b in _search_blocks(fake_anthropic.message_requests[-1].body)
    ]

    reimport_book(library, book_id)
    new_first = _page_of(library, book_id, words[:100])
    new_last = _page_of(library, book_id, words[-100:])
    assert (new_first, new_last) != (old_first, old_last), "the passage moved"
    cite_page = _page_of(library, book_id, quote)

    fake_anthropic.add(Reply.text("Yes, a hookah."))
    assert isinstance(_ask(service, conv.id, "Really?")[-1], RunFinished)
    body = fake_anthropic.message_requests[-1].body
    blocks = _search_blocks(body)
    sources = [b["source"] for b in blocks]
    assert source_for(book_id, new_first, new_last) in sources, "the passage at its new pages"
    assert old_source not in sources or (old_first, old_last) == (new_first, new_last)
    [ours] = [b for b in blocks if b["source"] == source_for(book_id, new_first, new_last)]
    assert pages_label(new_first, new_last) in ours["title"]

    # the stored answer's citation (what the spoiler check and exports read) moved with the chip
    row = (
        m.Message.select()
        .where((m.Message.conversation == conv.id) & (m.Message.kind == "answer"))
        .order_by(m.Message.id)
        .first()
    )
    assert row is not None
    [chip] = row.citations
    [content_cite] = [
        c for p in row.content if p.get("kind") == "text" for c in p.get("citations", [])
    ]
    assert chip["first_page"] == cite_page
    assert content_cite["first_page"] == cite_page, "the same page as its chip"


def test_page_labels_in_an_answer_follow_its_citation(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book_id = _old_import(library, books_dir, monkeypatch)
    texts = dict(library.page_texts(book_id))
    page = 40
    words = collapse(texts[page])[300:360].rsplit(" ", 1)[0]
    conversations = Conversations(library.db)
    conv = conversations.create(book_id)
    ids = conversations.start_run(
        conv.id, provider="anthropic", model="m", strategy="s", question=Question("where?")
    )
    cite = CitationRef(book_id, page, page, words)
    answer = f"There [p. {page}], and again [pp. {page}–{page + 1}]."
    read = ToolCall("c1", "read_pages", {"start": page, "end": page + 1})
    conversations.finish(
        conversation_id=conv.id,
        ids=ids,
        status="complete",
        message=AssistantMessage((read, TextPart(answer, (cite,)))),
        text=answer,
        citations=(cite,),
        steps=1,
        usage=Usage(),
        stop_reason="end_turn",
    )
    reimport_book(library, book_id)
    moved = _page_of(library, book_id, words)
    assert moved != page
    row = m.Message.get((m.Message.conversation == conv.id) & (m.Message.kind == "answer"))
    [part] = [p for p in row.content if p.get("kind") == "text"]
    assert part["text"].startswith(f"There [p. {moved}], and again [pp. ")
    assert row.text == part["text"], "what the reader sees names the same pages"
    assert part["citations"][0]["first_page"] == moved
    # the pages the model asked for follow the words they started with
    [call] = [p for p in row.content if p.get("kind") == "tool_call"]
    starts = [_page_of(library, book_id, collapse(texts[n])[:48]) for n in (page, page + 1)]
    assert [call["arguments"]["start"], call["arguments"]["end"]] == starts
    assert json.dumps(row.citations).count(f'"first_page": {moved}') == 1
