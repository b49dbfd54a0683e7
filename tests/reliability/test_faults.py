"""Every fault from the model server ends within its deadline, with the right message from the
error taxonomy, persists nothing twice, and leaves the next question working."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from core.agent.events import RunFailed, RunFinished
from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import AgentLimits, Settings
from core.store import models as m
from core.store.library import Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply

FAULTS = [
    ("401", Reply.error(401, "authentication_error", "invalid x-api-key"), "bad_key"),
    ("403", Reply.error(403, "permission_error", "not allowed"), "permission"),
    ("404 model", Reply.error(404, "not_found_error", "model: nope"), "model_not_found"),
    (
        "429 retry-after",
        Reply.error(429, "rate_limit_error", "slow down", retry_after=0.01),
        "rate_limited",
    ),
    ("500", Reply.error(500, "api_error", "internal"), "unexpected"),
    ("529", Reply.error(529, "overloaded_error", "Overloaded"), "overloaded"),
    ("stream cut mid-way", Reply.cut("The answer started and"), "bad_response"),
    ("overloaded inside the stream", Reply.stream_error("Partial"), "overloaded"),
    ("never answers", Reply.hanging(), "timeout"),
    ("malformed SSE", Reply.garbage(), "bad_response"),
]


@pytest.fixture
def setup(margin_home: Path, books_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-faults")
    library = Library.open(resolve_paths())
    book = import_book(library, books_dir / "metamorphosis.txt").book
    yield library, book
    library.close()


def service(library: Library, url: str, timeout: float = 1.5) -> AgentService:
    # short timeouts so a silent server is noticed quickly; the SDK retries once
    settings = Settings(
        provider="anthropic",
        base_url=url,
        model="claude-test",
        limits=AgentLimits(stream_idle_s=2.0, deadline_s=20.0),
    )
    return AgentService(
        library,
        library.paths,
        settings,
        provider_factory=lambda s, k: make_provider(s, k, max_retries=1, timeout=timeout),
        retry_delay=0.01,
    )


async def ask(svc: AgentService, conv: int, text: str) -> list[Any]:
    return [e async for e in svc.ask(conv, text)]


@pytest.mark.parametrize("name,reply,code", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault(setup: Any, name: str, reply: Reply, code: str) -> None:
    library, book = setup
    with FakeAnthropic() as fake:
        # the silent server is waited for twice (the SDK's retry): half a second each
        svc = service(library, fake.url, timeout=0.5 if name == "never answers" else 1.5)
        conv = svc.create_conversation(book.id).id
        fake.add(*[reply] * 4)  # the SDK and the app may retry
        started = time.perf_counter()
        events = asyncio.run(ask(svc, conv, "What happens?"))
        took = time.perf_counter() - started
        assert isinstance(events[-1], RunFailed), name
        assert events[-1].error.code == code, f"{name}: {events[-1].error}"
        assert events[-1].error.message and events[-1].error.hint
        assert took < 15, f"{name} took {took:.1f} s"
        assert m.Message.select().where(m.Message.kind == "question").count() == 1
        assert (
            m.Message.select()
            .where((m.Message.kind == "answer") & (m.Message.status == "complete"))
            .count()
            == 0
        )
        fake.script.clear()
        fake.add(Reply.text("Back to normal."))
        ok = asyncio.run(ask(svc, conv, "And now?"))
        assert isinstance(ok[-1], RunFinished) and ok[-1].result.answer == "Back to normal."
        assert m.Message.select().where(m.Message.kind == "question").count() == 2


def test_server_not_there(setup: Any) -> None:
    library, book = setup
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    svc = service(library, f"http://127.0.0.1:{port}")
    conv = svc.create_conversation(book.id).id
    started = time.perf_counter()
    events = asyncio.run(ask(svc, conv, "Anyone?"))
    assert events[-1].error.code == "unreachable"
    assert time.perf_counter() - started < 10
