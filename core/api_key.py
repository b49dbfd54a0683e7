"""The Anthropic API key: ``ANTHROPIC_API_KEY``, else the system keyring (service "Margin"),
else a key kept in memory for this session only, used when no keyring backend works here.
The keyring is read at most once a run (it may prompt), behind a lock, never for showing
which model a question would use; the key never reaches a file, the database or a log."""

from __future__ import annotations

import logging
import os
import sys
import threading

from core.errors import SettingsError

log = logging.getLogger(__name__)

KEYRING_SERVICE = "Margin"
KEYRING_USER = "anthropic-api-key"

# The API key --------------------------------------------------------------------------

_session_key: str | None = None
# the keyring is read once a run (a locked one, or none yet, prompts at each read); the lock
_keyring_read = False
_keyring_key: str | None = None
_keyring_lock = threading.Lock()  # makes a second reader wait for the first one's answer


def _no_keyring_here() -> bool:
    """True when no keyring can exist for Margin: on Linux each one it can use (the Secret
    Service, KWallet) is reached over the session's D-Bus, so with no session bus (a server, a
    container, an SSH login), no backend named in PYTHON_KEYRING_BACKEND and no keyringrc.cfg
    there is none. Asking keyring itself to find that out imports every backend: 13 MB of
    the window's memory and ~140 ms."""
    if not sys.platform.startswith("linux"):
        return False
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or os.environ.get("PYTHON_KEYRING_BACKEND"):
        return False
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return not os.path.exists(os.path.join(config, "python_keyring", "keyringrc.cfg"))


def _keyring_usable() -> bool:
    if _no_keyring_here():
        return False
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            return False
        chained = getattr(backend, "backends", None)
        return not (chained is not None and not chained)
    except Exception:
        return False


def key_storage_available() -> bool:
    """Whether a system keyring can keep the key between sessions."""
    return _keyring_usable()


def get_api_key() -> str | None:
    """The key: the environment's, else the keyring's (read at most once a run: it may
    prompt, so never call this on the window's thread before ``api_key_known``), else the
    one kept for this session."""
    global _keyring_read, _keyring_key
    env = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if env:
        return env
    with _keyring_lock:
        if not _keyring_read:
            _keyring_key = _read_keyring()
            _keyring_read = True
        stored = _keyring_key
    return stored or _session_key


def _read_keyring() -> str | None:
    if not _keyring_usable():
        return None
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, KEYRING_USER) or None
    except Exception as exc:
        log.warning("the keyring could not be read: %s", type(exc).__name__)
        return None


def api_key_known() -> bool:
    """Whether ``get_api_key`` answers without touching the keyring."""
    return bool(os.environ.get("ANTHROPIC_API_KEY", "").strip()) or _keyring_read


def known_api_key() -> str | None:
    """The key if it is known without touching the keyring (None while it is not read)."""
    return get_api_key() if api_key_known() else _session_key


def forget_keyring_read() -> None:  # (tests: each begins with an unread keyring)
    global _keyring_read, _keyring_key
    with _keyring_lock:
        _keyring_read, _keyring_key = False, None


def set_api_key(key: str) -> str:
    """Store the key; returns "keyring", or "session" when it is kept in memory only."""
    global _session_key
    key = key.strip()
    if not key:
        raise SettingsError(
            "empty_key", "The API key is empty.", hint="Paste the key from console.anthropic.com."
        )
    if any(ch.isspace() for ch in key) or not key.isprintable():
        raise SettingsError(
            "bad_key_format",
            "That does not look like an API key (it has spaces or control characters).",
        )
    if _keyring_usable():
        try:
            import keyring

            keyring.set_password(KEYRING_SERVICE, KEYRING_USER, key)
            _session_key = None
            _remember_keyring(key)
            return "keyring"
        except Exception as exc:
            log.warning("the keyring could not store the key: %s", type(exc).__name__)
    _session_key = key
    return "session"


def _remember_keyring(key: str | None) -> None:
    global _keyring_read, _keyring_key
    with _keyring_lock:
        _keyring_read, _keyring_key = True, key


def delete_api_key() -> None:
    global _session_key
    _session_key = None
    _remember_keyring(None)
    if _keyring_usable():
        try:
            import keyring

            keyring.delete_password(KEYRING_SERVICE, KEYRING_USER)
        except Exception:
            pass
