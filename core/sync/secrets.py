"""Passwords for sync servers: an environment variable, else the system keyring, else this
session only. Never a file, the database or the log."""

from __future__ import annotations

import logging
import os

log = logging.getLogger("margin.sync.secrets")

SERVICE = "Margin sync"
_session: dict[str, str] = {}


def _account(kind: str, server: str, user: str) -> str:
    return f"{kind}:{user}@{server}"


def get_password(kind: str, server: str, user: str) -> str | None:
    """The password for ``user`` at ``server`` (``kind``: "kosync" or "webdav");
    ``MARGIN_KOSYNC_PASSWORD`` / ``MARGIN_WEBDAV_PASSWORD`` win."""
    from core.api_key import _keyring_usable
    from core.log import register_secret

    env = os.environ.get(f"MARGIN_{kind.upper()}_PASSWORD", "")
    if env:
        register_secret(env)
        return env
    account = _account(kind, server, user)
    if _keyring_usable():
        try:
            import keyring

            stored = keyring.get_password(SERVICE, account)
            if stored:
                register_secret(stored)
                return stored
        except Exception as exc:
            log.warning("the keyring could not be read: %s", type(exc).__name__)
    return _session.get(account)


def set_password(kind: str, server: str, user: str, password: str) -> str:
    """Keep the password; returns "keyring" or "session"."""
    from core.api_key import _keyring_usable
    from core.log import register_secret

    register_secret(password)
    account = _account(kind, server, user)
    if _keyring_usable():
        try:
            import keyring

            keyring.set_password(SERVICE, account, password)
            _session.pop(account, None)
            return "keyring"
        except Exception as exc:
            log.warning("the keyring could not store a password: %s", type(exc).__name__)
    _session[account] = password
    return "session"


def delete_password(kind: str, server: str, user: str) -> None:
    from core.api_key import _keyring_usable

    account = _account(kind, server, user)
    _session.pop(account, None)
    if _keyring_usable():
        try:
            import keyring

            keyring.delete_password(SERVICE, account)
        except Exception:
            pass
