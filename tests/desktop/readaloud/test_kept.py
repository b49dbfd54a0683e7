"""Read aloud's voice, speed and "read answers aloud when they finish" are kept in
settings.toml's [read_aloud] table and come back in a new window on the same MARGIN_HOME;
a bad value there is said, and the rest still applies."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.paths import resolve_paths
from core.settings import Settings, save_settings
from core.speech import settings as kept_settings
from tests.desktop.conftest import close_window, open_alice, open_window


@pytest.fixture(autouse=True)
def _test_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    yield


def test_voice_speed_and_answers_come_back_after_a_restart(
    qtbot: Any, app: Any, real_font: str, books_dir: Path
) -> None:
    first = open_window(app, qtbot)
    parts = first.read_aloud
    open_alice(first, books_dir, page=5)  # an English book
    qtbot.wait(100)  # (the menus' wrappers once went invalid here: the options then failed)
    parts.actions["faster"].trigger()
    parts.actions["faster"].trigger()
    parts._fill_voices()  # the Voice menu as it opens
    other = next(a for a in parts.voices.actions() if not a.isChecked())  # not the default
    voice = other.text().split(" (")[0]
    other.trigger()
    parts.answers.setChecked(True)
    close_window(qtbot, first)

    raw = tomllib.loads(app.paths.settings_file.read_text(encoding="utf-8"))
    assert raw["read_aloud"] == {
        "voice": voice,
        "voice_language": raw["read_aloud"]["voice_language"],
        "rate": pytest.approx(0.2),
        "answers_aloud": True,
    }
    language = raw["read_aloud"]["voice_language"]
    assert language.startswith("en")

    again = open_window(app, qtbot)
    try:
        parts = again.read_aloud
        speech = parts.rs.speech
        assert parts.answers.isChecked(), "▶ the answers option was forgotten"
        assert speech.speaker.rate == pytest.approx(0.2), "▶ the speed was forgotten"
        assert speech.play_text("Good morning.", language)
        engine = speech.speaker.engine()
        assert engine.voice().name() == voice, "▶ the voice was forgotten"
        assert engine.rate() == pytest.approx(0.2)
        speech.stop()
        assert speech.play_text("God morgen.", "nb-NO")  # another language: its own voice
        assert engine.voice().name() == "Eivind"
        speech.stop()
        assert speech.play_text("Good evening.", language)  # back to English: the one chosen
        assert engine.voice().name() == voice
        speech.stop()
    finally:
        close_window(qtbot, again)


def test_the_table_survives_the_other_settings_being_saved(margin_home: object) -> None:
    paths = resolve_paths().ensure()
    wanted = kept_settings.ReadAloudSettings("Mary", "en-US", -0.3, True)
    assert kept_settings.save(paths, wanted)
    save_settings(paths, Settings(model="claude-test"))  # Settings… saved afterwards
    assert kept_settings.load(paths) == (wanted, [])


def test_a_bad_value_is_said_and_the_others_apply(margin_home: object) -> None:
    paths = resolve_paths().ensure()
    paths.settings_file.write_text(
        '[read_aloud]\nrate = 5\nvoice = "Bob"\nanswers_aloud = "yes"\n', encoding="utf-8"
    )
    kept, problems = kept_settings.load(paths)
    assert kept == kept_settings.ReadAloudSettings(voice="Bob")
    assert len(problems) == 2
    assert "'read_aloud.rate'" in problems[0] and "-1.0 (slowest) to 1.0" in problems[0]
    assert "'read_aloud.answers_aloud'" in problems[1] and "true or false" in problems[1]
    paths.settings_file.write_text("[read_aloud\n", encoding="utf-8")  # not TOML
    assert kept_settings.load(paths)[0] == kept_settings.ReadAloudSettings()
    assert not kept_settings.save(paths, kept)  # an unreadable file is never overwritten
    assert paths.settings_file.read_text(encoding="utf-8") == "[read_aloud\n"
