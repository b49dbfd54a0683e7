"""A server's token counts cannot lose the answer or make the cost negative (issue 27,
item 7): the real SDK against the fake server, and the real CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.agent.types import Usage
from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.reliability.clirun import run


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 2**66, "output_tokens": 2**66},
        {"input_tokens": -1000, "output_tokens": -50, "cache_read_input_tokens": -7},
    ],
    ids=["2^66", "negative"],
)
def test_odd_token_counts_keep_the_answer(
    tmp_path: Path, books_dir: Path, usage: dict[str, int]
) -> None:
    home = tmp_path / "home"
    assert run(home, "import", str(books_dir / "metamorphosis.txt")).returncode == 0
    assert run(home, "finished", "1").returncode == 0  # no spoiler limit for this answer
    with FakeAnthropic() as fake:
        save_settings(
            resolve_paths(home),
            Settings(provider="anthropic", base_url=fake.url, model="claude-sonnet-4-5"),
        )
        fake.add(Reply.text("Gregor wakes up as an insect.", usage=usage))
        done = run(home, "ask", "1", "What happens first?")
    assert done.returncode == 0, done.stderr
    assert "disk" not in done.stderr
    history = run(home, "history", "1")
    assert "Gregor wakes up as an insect." in history.stdout
    listing = run(home, "conversations", "1")
    assert listing.returncode == 0, listing.stderr
    assert "-$" not in listing.stdout and not re.search(r"-\d+ tokens", listing.stdout)


def test_usage_is_clamped() -> None:
    assert Usage(-5, 2**66).input_tokens == 0
    assert 0 < Usage(-5, 2**66).output_tokens <= 2**62
