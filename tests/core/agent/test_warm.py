"""core/agent/warm.py: the first question's one-time work done before it is asked."""

from __future__ import annotations

import asyncio
from typing import Any

from core.agent import warm
from core.agent.providers.anthropic import client as anthropic_client
from core.agent.spoiler_stats import prepare_book
from core.store import reserve
from core.store.library import BookInfo, Library


def test_a_book_is_warmed_once_its_spoiler_counts_are_stored(
    library: Library, alice: BookInfo, make_service: Any
) -> None:
    service = make_service()
    assert not warm.stats_stored(library.db, alice.id)
    assert not warm.warm_book(service, alice.id), "the window counts them: look again later"
    assert not service.spoilers._items, "never counted twice (here and by the window)"
    assert (library.paths.data / reserve.NAME).stat().st_size == reserve.SIZE
    assert prepare_book(library.db, alice.id)
    assert warm.warm_book(service, alice.id)
    index = next(iter(service.spoilers._items.values()))
    assert index._disguise, "the check's tables for this bound are built"
    assert service.spoilers.get(library.db, alice.id) is index, "the question finds it ready"


def test_connect_builds_the_client_where_answers_stream(make_service: Any) -> None:
    service = make_service()
    provider = service.provider()
    asyncio.run(warm.connect(service))
    assert provider._client is not None
    assert provider._client_loop is anthropic_client._StreamLoop.get().loop
    assert service.provider() is provider, "the question uses this provider and client"


def test_passages_mode_has_nothing_to_connect(library: Library, monkeypatch: Any) -> None:
    from core.agent.service import AgentService
    from core.settings import Settings

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    service = AgentService(library, library.paths, Settings(provider="passages"))
    asyncio.run(warm.connect(service))  # no SDK, no client, no error
