"""A local model reading its prompt (issue 40, item 2): llama-server sends its headers at once
and its first event only after reading the prompt (90 s and more for Margin's prompts on two
cores). That wait is not silence: the run waits, and tells the reader what the model reads;
a server silent after it began streaming still fails as before.

The clock is scaled (an idle limit of 0.3 s against a first event after 0.9 s, as 60 s against
90 s) on the same code path: the real SDK, the real provider, the fake server on loopback."""

from __future__ import annotations

from typing import Any

import pytest

from core.agent import waiting
from core.agent.events import Notice, RunFailed, RunFinished
from core.store.library import BookInfo, Library
from tests.core.agent.test_local_models import ask, local_service
from tests.fakes.anthropic_server import FakeAnthropic, Reply

QUESTION = "Why does the Cheshire Cat grin?"


@pytest.fixture(autouse=True)
def quick_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "FIRST_NOTICE_S", 0.2)
    monkeypatch.setattr(waiting, "EVERY_S", 0.3)


def test_a_first_event_three_idle_limits_late_is_waited_for_and_the_reader_told(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add(
        Reply.text("It is a Cheshire cat, the Duchess says [p. 45].", first_event_delay=0.9),
    )
    service = local_service(library, fake_anthropic, "always-retrieve", stream_idle_s=0.3)
    events: list[Any] = ask(service, alice, QUESTION)
    assert isinstance(events[-1], RunFinished), events[-1]
    assert "Cheshire cat" in events[-1].result.answer
    notices = [e.text for e in events if isinstance(e, Notice)]
    reading = [n for n in notices if n.startswith("The model is reading")]
    given = len(events[-1].result.passages)
    assert given and reading, notices
    assert any(f"reading {given} passages from the book" in n for n in reading), reading
    assert not any("connection" in n for n in notices)


def test_a_server_silent_after_it_began_streaming_still_fails(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add(
        Reply.text(
            "It is a Cheshire cat, and that is why it grins so.",
            first_event_delay=0.5,
            stall_after_chars=12,
            stall_s=3.0,
        ),
    )
    service = local_service(library, fake_anthropic, "always-retrieve", stream_idle_s=0.4)
    events = ask(service, alice, QUESTION)
    assert isinstance(events[-1], RunFailed)
    assert events[-1].error.code == "timeout"
    assert "stopped sending" in events[-1].error.message


def test_reading_notice_words() -> None:
    assert waiting.reading_notice(6, 1.0) == "The model is reading 6 passages from the book…"
    assert waiting.reading_notice(1, 20.0) == (
        "The model is reading 1 passage from the book… (20 s so far)"
    )
    assert "40% read" in waiting.reading_notice(6, 30.0, 0.4)
