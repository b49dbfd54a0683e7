from __future__ import annotations

from pathlib import Path

import pytest

from core.api_key import delete_api_key, get_api_key, key_storage_available, set_api_key
from core.errors import SettingsError
from core.paths import resolve_paths
from core.settings import AgentLimits, Settings, load_settings, save_settings


def test_defaults_roundtrip_and_no_key_in_file(margin_home: Path) -> None:
    paths = resolve_paths().ensure()
    assert load_settings(paths) == Settings()
    custom = Settings(
        provider="local",
        base_url="http://localhost:8080",
        model="qwen",
        strategy="always-retrieve",
        spoiler_safe=False,
        limits=AgentLimits(max_turns=3, deadline_s=30.0),
    )
    set_api_key("sk-ant-secret-value")
    save_settings(paths, custom)
    assert load_settings(paths) == custom
    assert "sk-ant-secret-value" not in paths.settings_file.read_text()


@pytest.mark.parametrize(
    "text,key",
    [
        ('provider = "openai"', "provider"),
        ('strategy = "magic"', "strategy"),
        ('base_url = "ftp://x"', "base_url"),
        ("spoiler_safe = 3", "spoiler_safe"),
        ("[limits]\nmax_turns = -1", "limits.max_turns"),
        ("[limits]\nmax_turnz = 2", "limits.max_turnz"),
        ("colour = 1", "colour"),
        ("this is not toml", ""),
    ],
)
def test_invalid_settings_name_the_key_and_file(margin_home: Path, text: str, key: str) -> None:
    paths = resolve_paths().ensure()
    paths.settings_file.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(paths)
    assert str(paths.settings_file) in err.value.message
    assert key in err.value.message


def test_effective_provider() -> None:
    assert Settings().effective_provider(False) == "passages"
    assert Settings().effective_provider(True) == "anthropic"
    assert Settings(provider="local").effective_provider(False) == "local"
    assert Settings(provider="passages").effective_provider(True) == "passages"
    assert Settings(provider="local").effective_base_url() == "http://localhost:11434"


def test_env_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert Settings().effective_base_url() == "http://127.0.0.1:9"


def test_key_from_env_then_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_api_key() is None
    assert key_storage_available()
    assert set_api_key("  sk-ant-abc  ") == "keyring"
    assert get_api_key() == "sk-ant-abc"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert get_api_key() == "sk-env"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    delete_api_key()
    assert get_api_key() is None
    with pytest.raises(SettingsError):
        set_api_key("   ")
    with pytest.raises(SettingsError):
        set_api_key("two words")


def test_no_keyring_backend_keeps_key_for_session(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    assert not key_storage_available()
    assert set_api_key("sk-session-only") == "session"
    assert get_api_key() == "sk-session-only"
    delete_api_key()
    assert get_api_key() is None


# [reader]: the look of books -------------------------------------------------------------


def test_reader_table_defaults_roundtrip_and_other_settings_kept(margin_home: Path) -> None:
    from core.settings import (
        ReaderSettings,
        Settings,
        load_reader_settings,
        load_settings,
        save_reader_settings,
        save_settings,
    )

    paths = resolve_paths().ensure()
    assert load_reader_settings(paths) == (ReaderSettings(), [])
    save_settings(paths, Settings(model="claude-test"))
    chosen = ReaderSettings(font_family="DejaVu Serif", font_size=15, measure=70, justify=True)
    save_reader_settings(paths, chosen)
    assert load_reader_settings(paths) == (chosen, [])
    assert load_settings(paths).model == "claude-test", "the [reader] table is accepted"
    save_settings(paths, Settings(model="claude-other"))  # saving the others keeps [reader]
    assert load_reader_settings(paths) == (chosen, [])
    assert load_settings(paths).model == "claude-other"


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ("font_size = 500", "font_size", "from 6 to 48"),
        ("font_size = 12.5", "font_size", "whole number"),
        ('line_spacing = "double"', "line_spacing", "from 1.0 to 3.0"),
        ("line_spacing = true", "line_spacing", "from 1.0 to 3.0"),
        ("paragraph_indent = -1", "paragraph_indent", "from 0 to 5"),
        ("measure = 10", "measure", "characters per line"),
        ("margin = -4", "margin", "pixels"),
        ('justify = "yes"', "justify", "true or false"),
        ("book_styles = 1", "book_styles", "true or false"),
        ("font_family = 3", "font_family", "a font name"),
        ("colour = 'red'", "colour", "one of font_family"),
    ],
)
def test_bad_reader_value_is_reported_and_falls_back(
    margin_home: Path, line: str, key: str, expected: str
) -> None:
    from core.settings import ReaderSettings, load_reader_settings

    paths = resolve_paths().ensure()
    paths.settings_file.write_text(f"[reader]\n{line}\nfont_size = 14\n")
    if key == "font_size":  # the bad line itself is the font size
        paths.settings_file.write_text(f"[reader]\n{line}\njustify = true\n")
    settings, problems = load_reader_settings(paths)
    mine = [p for p in problems if f"'reader.{key}'" in p]
    assert len(mine) == 1, problems
    assert expected in mine[0] and str(paths.settings_file) in mine[0]
    assert "until you fix or delete that line" in mine[0]
    if key in ReaderSettings.__dataclass_fields__:
        assert getattr(settings, key) == getattr(ReaderSettings(), key), "the default is used"
    # the good keys still apply
    if key == "font_size":
        assert settings.justify is True
    else:
        assert settings.font_size == 14


def test_reader_settings_survive_a_broken_file(margin_home: Path) -> None:
    from core.settings import ReaderSettings, load_reader_settings, save_reader_settings

    paths = resolve_paths().ensure()
    paths.settings_file.write_text("[reader\nfont_size = 14\n")
    settings, problems = load_reader_settings(paths)
    assert settings == ReaderSettings()
    assert len(problems) == 1 and "not" in problems[0] and "default look" in problems[0]
    with pytest.raises(SettingsError) as err:  # never overwrite a file people must fix
        save_reader_settings(paths, ReaderSettings(font_size=20))
    assert "were not saved" in err.value.message
    paths.settings_file.write_text("reader = 3\n")
    settings, problems = load_reader_settings(paths)
    assert settings == ReaderSettings() and "not a table" in problems[0]
