"""Read aloud's controller against Qt's own test engine ("mock": it speaks to no sound card,
reports each word and pauses at a word's end): the sentences said in order, pause, resume,
stop, previous and next sentence, speed, the sleep timer, and the bad cases."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core.speech import plan_book
from core.speech.plan import Utterance
from desktop.readaloud.controller import ReadAloud
from desktop.readaloud.speaker import NO_ENGINE

PAGES = {
    1: "Mr. Holmes sat up. He said nothing at all.",
    2: "[Illustration: A dog]\n\nThe end came[3] soon.",
}


def planner(page: int, offset: int) -> Iterator[Utterance]:
    return plan_book(lambda n: PAGES[n], 2, page, "epub", offset)


@pytest.fixture
def speech(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReadAloud]:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    s = ReadAloud()
    s.set_rate(1.0)  # the mock says a word in 50 ms at the fastest
    s.set_source(planner, "en")
    yield s
    s.stop()


def record(s: ReadAloud) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {"said": [], "words": [], "pages": [], "states": [], "told": []}
    s.utteranceStarted.connect(lambda u: seen["said"].append(u.text))
    s.wordStarted.connect(lambda p, a, b: seen["words"].append(PAGES[p][a:b]))
    s.pageListened.connect(seen["pages"].append)
    s.stateChanged.connect(seen["states"].append)
    s.message.connect(seen["told"].append)
    return seen


def test_says_every_sentence_in_order_and_each_page_listened(qtbot: Any, speech: ReadAloud) -> None:
    seen = record(speech)
    with qtbot.waitSignal(speech.finished, timeout=10000):
        assert speech.play(1)
    assert seen["said"] == [
        "Mr. Holmes sat up.",
        "He said nothing at all.",
        "Illustration: A dog",
        "The end came soon.",
    ]
    assert seen["pages"] == [1, 2]
    assert seen["words"][:4] == ["Mr", "Holmes", "sat", "up"]
    assert "came" in seen["words"] and "soon" in seen["words"]
    assert seen["states"] == ["playing", "stopped"] and seen["told"] == []


def test_pause_resume_stop(qtbot: Any, speech: ReadAloud) -> None:
    seen = record(speech)
    speech.play(1)
    qtbot.waitUntil(lambda: len(seen["words"]) >= 1, timeout=5000)
    speech.pause()
    qtbot.wait(150)  # the mock pauses at the end of the word it is saying
    held = len(seen["words"])
    qtbot.wait(400)
    assert speech.state == "paused" and len(seen["words"]) == held
    speech.resume()
    qtbot.waitUntil(lambda: len(seen["words"]) > held, timeout=5000)
    speech.stop()
    stopped = len(seen["words"])
    qtbot.wait(300)
    assert speech.state == "stopped" and len(seen["words"]) == stopped
    assert seen["states"] == ["playing", "paused", "playing", "stopped"]


def test_next_and_previous_sentence(qtbot: Any, speech: ReadAloud) -> None:
    seen = record(speech)
    speech.play(1)
    speech.next_sentence()
    assert seen["said"] == ["Mr. Holmes sat up.", "He said nothing at all."]
    speech.previous_sentence()
    assert seen["said"][-1] == "Mr. Holmes sat up."
    speech.next_sentence()
    assert seen["said"][-1] == "He said nothing at all."


def test_speed(speech: ReadAloud) -> None:
    assert speech.speaker.ready()
    speech.set_rate(0.0)
    assert speech.faster() == pytest.approx(0.1) and speech.faster() == pytest.approx(0.2)
    assert speech.slower() == pytest.approx(0.1)
    engine = speech.speaker.engine()
    assert engine is not None and engine.rate() == pytest.approx(0.1)
    assert speech.set_rate(5) == 1.0


def test_sleep_timer_stops_at_the_end_of_a_sentence(qtbot: Any, speech: ReadAloud) -> None:
    seen = record(speech)
    speech.play(1)
    speech.sleep_in(0.001)  # 60 ms
    qtbot.waitUntil(lambda: speech.state == "stopped", timeout=5000)
    assert seen["said"] == ["Mr. Holmes sat up."]
    assert any("sleep timer" in t for t in seen["told"])


def test_an_answer_read_aloud(qtbot: Any, speech: ReadAloud) -> None:
    seen = record(speech)
    with qtbot.waitSignal(speech.finished, timeout=5000):
        assert speech.play_text("It is Holmes. He lives on Baker St. in London.")
    assert seen["said"] == ["It is Holmes.", "He lives on Baker St. in London."]


def test_no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "no-such-engine")
    s = ReadAloud()
    s.set_source(planner)
    told: list[str] = []
    s.message.connect(told.append)
    assert s.play(1) is False
    assert told == [NO_ENGINE] and "speech-dispatcher" in NO_ENGINE and s.state == "stopped"


def test_no_voice_for_the_language(speech: ReadAloud) -> None:
    told: list[str] = []
    speech.message.connect(told.append)
    speech.set_source(planner, "fr")  # the test engine speaks English, Norwegian, Finnish
    assert speech.play(1) is False
    assert len(told) == 1 and "no French voice" in told[0] and speech.state == "stopped"
    speech.set_source(planner, "nb-NO")
    assert speech.play(1) is True


def test_no_voice_for_the_language_but_a_voice_chosen(speech: ReadAloud) -> None:
    """The message names the Voice menu: a voice chosen there reads, and that is said."""
    told: list[str] = []
    speech.message.connect(told.append)
    assert speech.speaker.ready()
    french = speech.speaker.voices("fr")  # none: every voice is offered
    assert {v.name() for v in french} >= {"Anne", "Eivind", "Kari"}  # type: ignore[attr-defined]
    anne = next(v for v in french if v.name() == "Anne")  # type: ignore[attr-defined]
    assert speech.speaker.set_voice(anne) == ("Anne", "en-GB")
    speech.set_source(planner, "fr")
    assert speech.play(1) is True and speech.state == "playing"
    assert speech.speaker.engine().voice().name() == "Anne"
    assert told == [
        "There is no French voice installed: reading with Anne (English), the voice "
        "chosen under Read aloud › Voice."
    ]
    assert [v.name() for v in speech.speaker.voices("nb")] == ["Eivind", "Kjersti"]  # type: ignore[attr-defined]


def test_an_engine_stalling_mid_sentence(
    qtbot: Any, speech: ReadAloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.readaloud import controller

    monkeypatch.setattr(controller, "STALL_MIN_MS", 300)
    monkeypatch.setattr(controller, "STALL_MS_PER_CHAR", 1)
    seen = record(speech)
    speech.play(1)
    qtbot.waitUntil(lambda: len(seen["words"]) >= 1, timeout=5000)
    engine = speech.speaker.engine()
    engine.pause()  # the engine stops talking, unasked
    qtbot.waitUntil(lambda: speech.state == "stopped", timeout=5000)
    assert len(seen["told"]) == 1 and "stopped answering" in seen["told"][0]


def test_nothing_to_say(speech: ReadAloud) -> None:
    told: list[str] = []
    speech.message.connect(told.append)
    speech.set_source(lambda p, o: plan_book(lambda n: "", 3, p, "pdf", o))
    assert speech.play(1) is False
    assert told and told[0].startswith("This PDF has no text to read aloud")
