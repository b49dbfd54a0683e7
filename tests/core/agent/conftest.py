from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.settings import AgentLimits, Settings
from core.store.library import BookInfo, Library
from tests.fakes.anthropic_server import FakeAnthropic

KEY = "sk-ant-test-KEY-0123456789-RECOGNISABLE"


@pytest.fixture
def alice(library: Library, books_dir: Path) -> BookInfo:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    return library.set_position(book.id, 45)


@pytest.fixture
def read_metamorphosis(library: Library, books_dir: Path) -> BookInfo:
    """The Metamorphosis EPUB, read to its end."""
    book = import_book(library, books_dir / "metamorphosis.epub").book
    return library.set_read_to(book.id, book.page_count)


def fast_factory(settings: Settings, key: str | None) -> Any:
    return make_provider(settings, key, max_retries=1, timeout=5.0)


@pytest.fixture
def make_service(
    library: Library, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    def build(**limits: Any) -> AgentService:
        settings = Settings(
            provider="anthropic",
            base_url=fake_anthropic.url,
            model="claude-test",
            limits=AgentLimits(**limits),
        )
        return AgentService(
            library, library.paths, settings, provider_factory=fast_factory, retry_delay=0.01
        )

    return build
