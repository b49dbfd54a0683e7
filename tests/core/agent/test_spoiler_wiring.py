"""The spoiler check wired into answers: real SDK, fake server, real Alice.

Alice is read to p. 20 (the end of chapter III); a model answering from memory writes about
the trial and the Queen. The leaking sentence never reaches the reader's stream or the
replayed history; it is stored and can be revealed; honest answers pass untouched.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.answer import AnswerState, fill_hidden
from core.agent.events import RunFinished, SpoilerHidden, TextDelta
from core.agent.service import AgentService
from core.settings import AgentLimits, Settings
from core.store.library import BookInfo, Library
from tests.core.agent.conftest import fast_factory
from tests.fakes.anthropic_server import FakeAnthropic, Reply

HONEST = "Alice follows the White Rabbit down the rabbit-hole. She then falls for a long time."
LEAK = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."
MIXED = f"Alice grows and shrinks in the hall. {LEAK} She cries a pool of tears."


def collect(agen: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in agen]

    return asyncio.run(go())


@pytest.fixture
def read_to_20(library: Library, alice: BookInfo) -> BookInfo:
    """Alice read to the end of chapter III."""
    return library.set_position(alice.id, 21)


def service_for(library: Library, fake: FakeAnthropic, provider: str) -> AgentService:
    settings = Settings(
        provider=provider,
        base_url=fake.url,
        model="claude-test",
        limits=AgentLimits(),
        strategy="tool-use",  # the scripted replies are a tool-using model's (no probe)
    )
    return AgentService(
        library, library.paths, settings, provider_factory=fast_factory, retry_delay=0.01
    )


@pytest.mark.parametrize("provider", ["anthropic", "local"])
def test_leaking_sentence_is_held_back_stored_and_revealable(
    library: Library,
    read_to_20: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-spoiler-test-key-000")
    service = service_for(library, fake_anthropic, provider)
    conv = service.create_conversation(read_to_20.id)
    fake_anthropic.add(Reply.text(MIXED, tokens_per_second=400))
    events = collect(service.ask(conv.id, "What happens to Alice?"))
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "Knave" not in shown and "tarts" not in shown
    assert "grows and shrinks" in shown and "pool of tears" in shown
    hidden = [e for e in events if isinstance(e, SpoilerHidden)]
    assert len(hidden) == 1 and "Knave of Hearts" in hidden[0].withheld.text
    assert hidden[0].withheld.read_to == 21
    assert all(page > 21 for _, page in hidden[0].withheld.terms)
    result = events[-1].result
    assert isinstance(events[-1], RunFinished) and "Knave" not in result.answer
    # stored with the flags: the reader can reveal it later
    record = service.history(conv.id)[-1]
    assert "Knave" not in record.text and len(record.withheld) == 1
    revealed = fill_hidden(record.text, record.withheld, reveal=True)
    assert LEAK in revealed and "grows and shrinks" in revealed
    notice = fill_hidden(record.text, record.withheld)
    # a local model given no passage: its held-back sentence is "not from the book" (issue 40)
    expected = (
        "Hidden: not from the book"
        if provider == "local"
        else "Hidden: this part mentions something from after p. 21"
    )
    assert expected in notice
    # the event log records the check: terms and where they first appear
    log = (library.paths.event_logs / f"conversation-{conv.id}.jsonl").read_text()
    checks = [json.loads(x) for x in log.splitlines() if '"SPOILER_CHECK"' in x]
    assert checks and all(t["first_page"] > 21 for t in checks[0]["terms"])
    # the next question's history does not replay the hidden sentence to the model
    fake_anthropic.add(Reply.text("Alright."))
    collect(service.ask(conv.id, "And then?"))
    sent = json.dumps(fake_anthropic.message_requests[-1].body["messages"])
    assert "Knave" not in sent and "grows and shrinks" in sent


def test_honest_answer_passes_untouched(
    library: Library,
    read_to_20: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-spoiler-test-key-000")
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(read_to_20.id)
    fake_anthropic.add(Reply.text(HONEST))
    events = collect(service.ask(conv.id, "How does it begin?"))
    assert not any(isinstance(e, SpoilerHidden) for e in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == HONEST
    assert events[-1].result.answer == HONEST


def test_streaming_holds_back_at_most_the_sentence_being_written(
    library: Library,
    read_to_20: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-spoiler-test-key-000")
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(read_to_20.id)
    sentences = [f"Alice looks at door number {i} in the hall. " for i in range(6)]
    # the server falls silent for 1.5 s after the third sentence: what was shown before that
    # silence was shown while the answer streamed, however loaded the machine is (timing the
    # whole stream alone failed under load: the deltas came in one burst)
    half = len("".join(sentences[:3]))
    fake_anthropic.add(
        Reply.text("".join(sentences), tokens_per_second=40, stall_after_chars=half, stall_s=1.5)
    )

    async def go() -> list[tuple[float, str]]:
        seen: list[tuple[float, str]] = []
        loop = asyncio.get_running_loop()
        async for e in service.ask(conv.id, "Doors?"):
            if isinstance(e, TextDelta):
                seen.append((loop.time(), e.text))
        return seen

    seen = asyncio.run(go())
    # each sentence is shown on its own as soon as it is complete, not all at the end
    assert len(seen) >= len(sentences) - 1
    assert "".join(t for _, t in seen).strip() == "".join(sentences).strip()
    assert seen[-1][0] - seen[0][0] > 1.0, "sentences were shown while the answer streamed"


def test_passages_mode_quotes_stay_within_the_bound(
    library: Library, read_to_20: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    service = AgentService(library, library.paths, Settings(provider="passages"))
    conv = service.create_conversation(read_to_20.id)
    events = collect(service.ask(conv.id, "the White Rabbit with pink eyes"))
    assert isinstance(events[-1], RunFinished)
    assert not any(isinstance(e, SpoilerHidden) for e in events)
    state = AnswerState()
    for e in events:
        state.apply(e)
    assert "From the book" in state.text and state.citations
    assert all(c.last_page <= 21 for c in state.citations)


@pytest.mark.parametrize("lift", ["finished", "until"])
def test_finished_book_and_per_question_choice_lift_the_check(
    library: Library,
    read_to_20: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    lift: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-spoiler-test-key-000")
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(read_to_20.id)
    fake_anthropic.add(Reply.text(MIXED))
    options: dict[str, Any] = {}
    if lift == "finished":
        library.set_finished(read_to_20.id, True)
    else:
        options["spoilers_until"] = read_to_20.page_count
    events = collect(service.ask(conv.id, "Tell me everything", **options))
    assert not any(isinstance(e, SpoilerHidden) for e in events)
    assert LEAK in events[-1].result.answer
    # the next question, without the choice, is checked again
    if lift == "until":
        fake_anthropic.add(Reply.text(MIXED))
        again = collect(service.ask(conv.id, "Once more"))
        assert any(isinstance(e, SpoilerHidden) for e in again)


def test_cli_prints_the_notice_and_reveal_shows_it(
    library: Library,
    read_to_20: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from core.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-spoiler-test-key-000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    library.close()
    fake_anthropic.add(Reply.text(MIXED), Reply.text(MIXED))
    assert main(["ask", str(read_to_20.id), "What happens?"]) == 0
    out = capsys.readouterr().out
    assert "Knave" not in out and "Hidden: this part mentions something from after p. 21" in out
    assert "--reveal" in out
    assert main(["ask", str(read_to_20.id), "What happens?", "--reveal"]) == 0
    assert LEAK in capsys.readouterr().out
    assert main(["history", "1"]) == 0
    assert "Knave" not in capsys.readouterr().out
    assert main(["history", "1", "--reveal"]) == 0
    assert LEAK in capsys.readouterr().out
