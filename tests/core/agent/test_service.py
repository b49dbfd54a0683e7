"""AgentService (core/agent/service.py): provider choice, regenerate, the Settings checks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.agent.providers.passages import PassagesProvider
from core.agent.service import AgentService, list_models
from core.agent.service import test_connection as check_connection
from core.agent.types import Question, Selection
from core.errors import LLMError
from core.settings import Settings
from core.store.library import BookInfo, Library


def collect(agen: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in agen]

    return asyncio.run(go())


def test_without_a_key_answers_are_passages(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    service = AgentService(library, library.paths, Settings())
    assert service.mode() == "passages"
    assert isinstance(service.provider(), PassagesProvider)
    assert service.provider() is service.provider(), "one provider while nothing changes"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-service-test-key")
    assert service.mode() == "anthropic"


def test_regenerate_replaces_the_last_attempt_and_keeps_its_selection(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    service = AgentService(library, library.paths, Settings(provider="passages"))
    conv = service.create_conversation(alice.id)
    question = Question("Why the grin?", Selection("a grin without a cat", 40))
    collect(service.ask(conv.id, question))
    collect(service.regenerate(conv.id))
    history = service.history(conv.id)
    questions = [r for r in history if r.role == "user"]
    assert len(questions) == 1 and questions[0].selection_page == 40
    assert service.last_question(conv.id) == question
    with pytest.raises(Exception) as err:
        collect(service.regenerate(service.create_conversation(alice.id).id))
    assert "no question to ask again" in str(err.value)


def test_settings_checks_need_no_library_and_explain_a_missing_key() -> None:
    assert asyncio.run(list_models(Settings(provider="passages"), None)) == []
    text = asyncio.run(check_connection(Settings(provider="passages"), None))
    assert "Passages mode needs no connection" in text
    with pytest.raises(LLMError) as err:
        asyncio.run(check_connection(Settings(provider="anthropic"), None))
    assert "no API key" in err.value.message
