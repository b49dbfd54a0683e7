from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.settings import Settings
from core.store.library import BookInfo, Library
from tests.fakes.anthropic_server import FakeAnthropic

KEY = "sk-ant-test-KEY-companions"

# A small book whose people are named as novels name them: titles, full names, a familiar
# name beside the formal one, and a man who only comes in on the last pages.
STORY = """THE NEIGHBOURS

CHAPTER I

Mr. Bingley was a young man of good fortune, and he had taken the great house at Netherfield. His sister, Miss Bingley, was a proud woman who liked London better than the country. Elizabeth Bennet lived at Longbourn with her mother and her four sisters.

"Lizzy," said her mother, "you must call on Mr. Bingley." Elizabeth laughed at her mother, and Lizzy said nothing more that evening.

Miss Bingley wrote to Elizabeth the next morning. Elizabeth went to Netherfield on foot, and Miss Bingley thought her very wild. Mr. Bingley was delighted to see her.

"Lizzy, your petticoat is six inches deep in mud," said Jane. Elizabeth only smiled; Lizzy never minded the mud.

Bingley talked of balls. Bingley was everything a young man ought to be, said Jane. Elizabeth agreed with her sister.

CHAPTER II

The ball at Netherfield was crowded. Mr. Bingley danced with Jane twice, and Miss Bingley watched them with a cold eye. Elizabeth danced with the officers from Meryton.

Elizabeth walked home to Longbourn through the rain. Jane stayed at Netherfield with a cold. Miss Bingley nursed her with little grace.

CHAPTER III

A stranger came to Meryton in the spring. Mr. Wickham was a handsome officer, and Mr. Wickham told Elizabeth a sad story about his youth. Wickham smiled at every girl in the town, and Elizabeth believed every word Wickham said.
"""


@pytest.fixture
def alice(library: Library, books_dir: Path) -> BookInfo:
    return import_book(library, books_dir / "alice_in_wonderland.epub").book


@pytest.fixture
def story(library: Library, tmp_path: Path) -> BookInfo:
    path = tmp_path / "the_neighbours.txt"
    path.write_text(STORY, encoding="utf-8")
    return import_book(library, path).book


@pytest.fixture
def service(library: Library, fake_anthropic: FakeAnthropic, monkeypatch: Any) -> AgentService:
    """The chat's service talking to the fake Claude (a key in the environment)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    settings = Settings(provider="anthropic", base_url=fake_anthropic.url, model="claude-haiku-4-5")
    return AgentService(
        library,
        library.paths,
        settings,
        provider_factory=lambda s, k: make_provider(s, k, max_retries=1, timeout=5.0),
        retry_delay=0.01,
    )
