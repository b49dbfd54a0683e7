"""Issue 23: doubtful sentences verified side by side, without stalling the answer.

With the real ``anthropic`` SDK against the fake server, whose verification replies come late
(``delay_before``): the calls of one answer overlap, each starts when its sentence is complete,
a verdict that comes too late leaves the lexical decision, and the text keeps its order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.agent import spoiler_verify
from core.agent.events import RunFinished, SpoilerHidden, TextDelta
from core.agent.spoiler_verify import PendingSegments, SupportCheck
from core.agent.spoilers import Segment
from core.books.importer import import_book
from core.store.library import Library
from tests.core.agent.test_spoilers_issue23 import KEY, META_READ_TO, collect, service_for
from tests.fakes.anthropic_server import FakeAnthropic, Reply

# Each is doubtful at the end of part I (tests/core/agent/test_spoilers_verify.py).
DOUBTFUL = (
    "The middle lodger spits on the floor and announces that he is leaving.",
    "In the end Gregor dies.",
    "Later his sister finds work.",
    "He eventually starves.",
)
DELAY = 1.0  # seconds before the fake server answers a verification


def is_verification(body: dict[str, Any]) -> bool:
    return body.get("max_tokens") == spoiler_verify.MAX_TOKENS


def late_verdicts(fake: FakeAnthropic, verdict: str, delay: float) -> None:
    """Every request after the scripted answer is a verification, answered ``delay`` late."""

    def respond(body: dict[str, Any]) -> Reply:
        assert is_verification(body)
        return Reply.text(verdict, delay_before=delay)

    fake.responder = respond


@pytest.fixture
def metamorphosis(library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    book = import_book(library, books_dir / "metamorphosis.epub").book
    library.set_position(book.id, META_READ_TO)
    return book.id


def test_doubtful_sentences_are_verified_side_by_side(
    library: Library, fake_anthropic: FakeAnthropic, metamorphosis: int
) -> None:
    """Four doubtful sentences: the four calls reach the server before the first verdict is
    sent (one after another, each would wait ``DELAY`` for the one before). Every verdict
    is used, and the answer keeps its order."""
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(metamorphosis)
    answer = "Gregor wakes up changed. " + " ".join(DOUBTFUL) + " That is all for now."
    fake_anthropic.add(Reply.text(answer))
    late_verdicts(fake_anthropic, "UNSUPPORTED", DELAY)
    events = collect(service.ask(conv.id, "What happens to Gregor?"))
    assert isinstance(events[-1], RunFinished)
    checks = [r for r in fake_anthropic.message_requests if is_verification(r.body)]
    assert len(checks) == len(DOUBTFUL)
    arrivals = sorted(r.received_at for r in checks)
    assert arrivals[-1] - arrivals[0] < DELAY / 2, arrivals  # all asked before any verdict
    sent = [json.dumps(r.body) for r in checks]
    for sentence in DOUBTFUL:  # each sentence verified once
        assert sum(sentence.split()[-2] in s for s in sent) >= 1
    hidden = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    assert [w.reason for w in hidden] == ["unsupported"] * len(DOUBTFUL)
    assert [w.text.strip() for w in hidden] == list(DOUBTFUL)  # in the answer's order
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown.startswith("Gregor wakes up changed. ") and shown.endswith("That is all for now.")
    assert events[-1].result.answer.index("⟪hidden:4⟫") < events[-1].result.answer.index(
        "That is all"
    )
    log = (library.paths.event_logs / f"conversation-{conv.id}.jsonl").read_text()
    assert log.count('"LLM_INVOCATION"') == 1 + len(DOUBTFUL)  # usage recorded for each
    usage = events[-1].result.usage  # the fake server counts 100 input tokens a call
    assert usage.input_tokens == 100 * (1 + len(DOUBTFUL))


def test_a_verification_starts_when_its_sentence_ends(
    library: Library, fake_anthropic: FakeAnthropic, metamorphosis: int
) -> None:
    """The answer streams slowly after its doubtful first sentence: the call is made while
    the answer is still being written, not at its end."""
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(metamorphosis)
    tail = " Gregor lies on his back and looks at the ceiling for a long while." * 3
    fake_anthropic.add(Reply.text(DOUBTFUL[0] + tail, chunk_chars=8, tokens_per_second=15))
    late_verdicts(fake_anthropic, "SUPPORTED", 0.0)
    events = collect(service.ask(conv.id, "What happens to Gregor?"))
    assert isinstance(events[-1], RunFinished)
    answer = fake_anthropic.message_requests[0]
    check = next(
        r
        for r in fake_anthropic.message_requests
        if "middle lodger spits" in json.dumps(r.body) and is_verification(r.body)
    )
    assert not is_verification(answer.body)
    # the answer streams for about 2.3 s: the check arrives while it is still being written
    assert answer.last_byte_at is not None
    assert check.received_at < answer.last_byte_at
    assert DOUBTFUL[0] in "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize(("verdict", "held"), [("UNSUPPORTED", False), ("SUPPORTED", True)])
def test_a_late_verdict_leaves_the_lexical_decision(
    library: Library,
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    verdict: str,
    held: bool,
) -> None:
    """The verdict would overrule the lexical decision, but comes after the timeout: a shown
    doubtful sentence stays shown, a sentence held on weak evidence stays held; the call is
    logged as timed out."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setattr(spoiler_verify, "TIMEOUT", 0.3)
    if held:  # "verse" is a motif of Alice first used on p. 41 (test_spoilers_verify.py)
        book = import_book(library, books_dir / "alice_in_wonderland.epub").book
        library.set_position(book.id, 21)
        sentence = "This part of the book is full of nonsense verse and puns."
    else:
        book = import_book(library, books_dir / "metamorphosis.epub").book
        library.set_position(book.id, META_READ_TO)
        sentence = DOUBTFUL[0]
    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(book.id)
    fake_anthropic.add(Reply.text(f"It starts well. {sentence}"))
    late_verdicts(fake_anthropic, verdict, 3.0)
    events = collect(service.ask(conv.id, "What happens?"))
    assert isinstance(events[-1], RunFinished)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    hidden = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    assert (sentence in shown) is not held
    assert [w.reason for w in hidden] == (["later"] if held else [])
    log = (library.paths.event_logs / f"conversation-{conv.id}.jsonl").read_text()
    assert '"error": "timeout"' in log


# --- the queue on its own: order, abandon ----------------------------------------------------


class Verdicts:
    """Verifications decided by the test: each sentence waits for its event."""

    def __init__(self) -> None:
        self.go: dict[str, asyncio.Event] = {}
        self.answers: dict[str, bool] = {}

    async def __call__(self, sentence: str, within: float = 10.0) -> SupportCheck:
        event = self.go.setdefault(sentence, asyncio.Event())
        await event.wait()
        return SupportCheck(self.answers[sentence])


def test_verdicts_out_of_order_keep_the_text_in_order() -> None:
    async def go() -> list[tuple[str, bool]]:
        verdicts = Verdicts()
        out: list[tuple[str, bool]] = []
        pending = PendingSegments(verdicts, lambda s, c, step: out.append((s.text, s.hidden)))
        pending.push(Segment("A. ", False), 1)
        pending.push(Segment("B. ", False, doubtful=True), 1)
        pending.push(Segment("C. ", False), 1)
        pending.push(Segment("D. ", False, doubtful=True), 1)
        pending.push(Segment("E.", False), 1)
        await asyncio.sleep(0)
        assert out == [("A. ", False)]  # B waits, and everything after it
        verdicts.answers |= {"D. ": False, "B. ": True}
        verdicts.go["D. "].set()  # the later verdict first
        await asyncio.sleep(0.01)
        assert out == [("A. ", False)]
        verdicts.go["B. "].set()
        await pending.drain()
        return out

    assert asyncio.run(go()) == [
        ("A. ", False),
        ("B. ", False),
        ("C. ", False),
        ("D. ", True),
        ("E.", False),
    ]


def test_abandon_keeps_the_lexical_decisions_and_cancels_the_calls() -> None:
    async def go() -> tuple[list[tuple[str, bool]], bool]:
        verdicts = Verdicts()
        out: list[tuple[str, bool]] = []
        pending = PendingSegments(verdicts, lambda s, c, step: out.append((s.text, s.hidden)))
        pending.push(Segment("A. ", True, doubtful=True), 1)
        pending.push(Segment("B.", False, doubtful=True), 1)
        await asyncio.sleep(0)
        pending.abandon()  # a Stop: no verdict came
        await asyncio.sleep(0)
        return out, pending.waiting

    out, waiting = asyncio.run(go())
    assert out == [("A. ", True), ("B.", False)] and not waiting


def test_a_stop_does_not_wait_for_verdicts(
    library: Library, fake_anthropic: FakeAnthropic, metamorphosis: int
) -> None:
    """Stop while a verification is out: the run ends at once, the doubtful sentence and
    the text after it keep the lexical decision (shown), in order."""
    import time

    from core.agent.events import RunCancelled

    service = service_for(library, fake_anthropic, "anthropic")
    conv = service.create_conversation(metamorphosis)
    fake_anthropic.add(Reply.text(f"Gregor wakes up changed. {DOUBTFUL[0]} That is all."))
    late_verdicts(fake_anthropic, "UNSUPPORTED", 5.0)

    async def go() -> tuple[list[Any], float]:
        stop = asyncio.Event()
        events: list[Any] = []
        stopped_at = 0.0
        async for e in service.ask(conv.id, "What happens to Gregor?", stop=stop):
            events.append(e)
            if isinstance(e, TextDelta) and not stop.is_set():
                await asyncio.sleep(0.3)  # the verification is out
                stop.set()
                stopped_at = time.perf_counter()
        return events, time.perf_counter() - stopped_at

    events, took = asyncio.run(go())
    assert isinstance(events[-1], RunCancelled)
    assert took < 3.0  # not the verification's 5 s
    assert events[-1].result.answer == f"Gregor wakes up changed. {DOUBTFUL[0]} That is all."
    assert not [e for e in events if isinstance(e, SpoilerHidden)]
