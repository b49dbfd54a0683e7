from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SettingsError
from core.paths import resolve_paths
from core.settings import (
    AgentLimits,
    Settings,
    delete_api_key,
    get_api_key,
    key_storage_available,
    load_settings,
    save_settings,
    set_api_key,
)


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
