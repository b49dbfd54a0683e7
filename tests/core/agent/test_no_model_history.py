"""A reply made with no model connected (passages mode) is never sent to a model as its own
words: when Claude answers later in the same conversation, it gets a labelled note instead."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.agent.events import RunFinished
from core.agent.providers.passages import HEADER
from core.agent.service import AgentService
from core.prompts import load_prompt
from core.settings import Settings
from core.store.library import BookInfo, Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply


def collect(agen: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in agen]

    return asyncio.run(go())


def test_a_passages_reply_reaches_claude_only_as_a_labelled_note(
    library: Library, alice: BookInfo, make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    offline = AgentService(library, library.paths, Settings(provider="passages"))
    conv = offline.create_conversation(alice.id)
    events = collect(offline.ask(conv.id, "Why is the White Rabbit late?"))
    assert isinstance(events[-1], RunFinished)
    stored = offline.history(conv.id)[-1].text
    assert HEADER.split("—")[0].strip("* ") in stored  # the passages reply is kept for the reader

    claude = make_service()
    fake_anthropic.add(Reply.text("He is late for the Duchess."))
    events = collect(claude.ask(conv.id, "And who is he going to see?"))
    assert isinstance(events[-1], RunFinished)
    sent = fake_anthropic.message_requests[-1].body["messages"]
    said = [json.dumps(m["content"]) for m in sent if m["role"] == "assistant"]
    assert said, "the earlier turn is in the history"
    assert not any("From the book" in s for s in said), said
    note = load_prompt("no_model_answer").strip()
    assert any(note[:60] in s for s in said)
    asked = json.dumps([m["content"] for m in sent if m["role"] == "user"])
    assert "Why is the White Rabbit late?" in asked  # the reader's own question stays
    assert "tool_use" not in json.dumps(sent)  # the passages run's search is not replayed


def test_passages_mode_still_sees_its_own_replies(library: Library, alice: BookInfo) -> None:
    service = AgentService(library, library.paths, Settings(provider="passages"))
    conv = service.create_conversation(alice.id)
    for question in ("Why is the White Rabbit late?", "Where does Alice fall?"):
        events = collect(service.ask(conv.id, question))
        assert isinstance(events[-1], RunFinished)
    assert len(service.history(conv.id)) == 4
