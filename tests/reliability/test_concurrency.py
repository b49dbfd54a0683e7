"""Five conversations answering at once while a book imports in a thread: every message is
persisted, in order, and nothing fails with "database is locked"."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from core.agent.events import RunFinished
from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import Settings
from core.store import models as m
from core.store.library import Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.support.pdfgen import book_pages, make_text_pdf


def test_five_conversations_and_an_import(
    margin_home: Path, books_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-concurrency")
    library = Library.open(resolve_paths())
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 96)
    pdf = make_text_pdf(
        tmp_path / "background.pdf", book_pages(250, books_dir / "alice_in_wonderland.txt")
    )
    errors: list[BaseException] = []
    with FakeAnthropic() as fake:
        svc = AgentService(
            library,
            library.paths,
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
            provider_factory=lambda s, k: make_provider(s, k, max_retries=0),
        )
        conversations = [svc.create_conversation(book.id).id for _ in range(5)]

        def respond(body: dict[str, Any]) -> Reply:
            last = body["messages"][-1]["content"]
            if any(block.get("type") == "tool_result" for block in last):
                return Reply.text("An answer from the passages. " * 10, tokens_per_second=400)
            return Reply.tools(
                ("search_book", {"query": "Alice"}), ("read_pages", {"start": 2, "end": 3})
            )

        fake.responder = respond

        def background_import() -> None:
            try:
                import_book(library, pdf)
            except BaseException as exc:
                errors.append(exc)

        async def talk(conv: int) -> list[Any]:
            first = [e async for e in svc.ask(conv, f"first question in {conv}")]
            second = [e async for e in svc.ask(conv, f"second question in {conv}")]
            return [first[-1], second[-1]]

        async def everything() -> list[list[Any]]:
            thread = threading.Thread(target=background_import)
            thread.start()
            results = await asyncio.gather(*(talk(c) for c in conversations))
            await asyncio.to_thread(thread.join)
            return list(results)

        results = asyncio.run(everything())
    assert errors == []
    assert all(isinstance(e, RunFinished) for pair in results for e in pair), [
        e for pair in results for e in pair if not isinstance(e, RunFinished)
    ]
    for conv in conversations:
        rows = list(m.Message.select().where(m.Message.conversation == conv).order_by(m.Message.id))
        kinds = [r.kind for r in rows]
        assert kinds == ["question", "tool_use", "tool_results", "answer"] * 2
        assert (
            rows[0].text == f"first question in {conv}"
            and rows[4].text == f"second question in {conv}"
        )
        assert all(r.status == "complete" for r in rows)
    assert [b.title for b in library.list_books() if b.title == "background"] == ["background"]
    library.close()
