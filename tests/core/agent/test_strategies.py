"""Strategies only choose (core/agent/strategies.py); the loop's stop table covers the API."""

from __future__ import annotations

import asyncio
import typing
from typing import Any

import pytest

from core.agent.chat import ChatWithBook
from core.agent.context import BookContext
from core.agent.loop import STOP_TABLE, Next
from core.agent.strategies import STRATEGIES, pick_strategy
from core.agent.tools import default_tools
from core.agent.types import Instruction, Passages, StopReason
from core.errors import SettingsError
from core.search import BookSearch
from core.settings import STRATEGIES as SETTING_NAMES
from core.settings import AgentLimits
from core.store.conversations import Conversations
from core.store.library import BookInfo, Library
from tests.core.agent.scripted import Scripted


def test_the_stop_table_covers_every_stop_reason_the_sdk_defines() -> None:
    import anthropic.types

    sdk = set(typing.get_args(anthropic.types.StopReason))
    assert sdk == {r.value for r in StopReason}
    assert set(STOP_TABLE) == set(StopReason)
    assert STOP_TABLE[StopReason.TOOL_USE].next is Next.TOOLS
    assert STOP_TABLE[StopReason.PAUSE_TURN].next is Next.CONTINUE
    assert all(STOP_TABLE[r].note for r in (StopReason.MAX_TOKENS, StopReason.REFUSAL))


def test_names_match_the_settings_and_a_bad_name_is_a_sentence() -> None:
    assert ("auto", *STRATEGIES) == SETTING_NAMES  # "auto" picks one of them (core.agent.probe)
    with pytest.raises(SettingsError) as err:
        pick_strategy("guess")
    assert "'guess' is not a loop strategy" in err.value.message


def answer(
    library: Library, book: BookInfo, strategy: str, *turns: Any, local: bool = False
) -> Scripted:
    provider = Scripted(*turns)
    if local:
        provider.name = "local"
        provider.supports_citations = False
    chat = ChatWithBook(
        provider=provider,
        tools=default_tools(),
        strategy=pick_strategy(strategy),
        context=BookContext(),
        conversations=Conversations(library.db),
        library=library,
        search=BookSearch(library.db),
        limits=AgentLimits(),
        event_logs=library.paths.event_logs,
    )
    conv = Conversations(library.db).create(book.id)

    async def go() -> list[Any]:
        return [e async for e in chat.run(conv.id, "Why does the Cheshire Cat grin?")]

    asyncio.run(go())
    return provider


def test_always_retrieve_searches_first_and_offers_no_tools(
    library: Library, alice: BookInfo
) -> None:
    provider = answer(library, alice, "always-retrieve", ["Cheshire grin"], ["Because."])
    rewrite, final = provider.typed
    assert rewrite.tools == () and "search query" in rewrite.messages[0].parts[0].text
    assert final.tools == ()
    added = final.messages[-1].parts
    passages = next(p for p in added if isinstance(p, Passages)).passages
    assert passages and all(p.last_page <= alice.read_to for p in passages)
    assert isinstance(added[-1], Instruction) and "Cheshire" in added[-1].text


def test_always_retrieve_asks_a_local_model_for_no_rewrite(
    library: Library, alice: BookInfo
) -> None:
    """Issue 40: with a local provider the first model call is the answer, passages given."""
    provider = answer(library, alice, "always-retrieve", ["Because."], local=True)
    (final,) = provider.typed
    assert final.tools == ()
    passages = next(p for p in final.messages[-1].parts if isinstance(p, Passages)).passages
    assert passages and all(p.last_page <= alice.read_to for p in passages)


def test_tool_use_offers_tools_and_llm_only_does_not(library: Library, alice: BookInfo) -> None:
    tools = answer(library, alice, "tool-use", ["Grins."]).typed[0].tools
    assert {t.name for t in tools} >= {"search_book", "read_pages", "table_of_contents"}
    assert answer(library, alice, "llm-only", ["Grins."]).typed[0].tools == ()
