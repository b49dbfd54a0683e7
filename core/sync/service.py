"""Sync between computers as the CLI and the window use it: the account in ``[webdav]``
(``url``, ``user``, ``folder``, ``enabled``), the password in the keyring, one sync at a
time per data folder. Nothing is sent unless ``enabled`` is true."""

from __future__ import annotations

import fcntl
from dataclasses import dataclass
from pathlib import Path

from core.paths import Paths
from core.store.library import Library
from core.sync import config, secrets
from core.sync.engine import SyncEngine, SyncReport
from core.sync.errors import SyncError
from core.sync.webdav import WebDav

TABLE = "webdav"


@dataclass(frozen=True)
class WebDavAccount:
    url: str
    user: str = ""
    folder: str = "Margin"
    enabled: bool = False
    books: bool = False  # the book files travel too


def account(paths: Paths) -> WebDavAccount | None:
    values = config.table(paths, TABLE)
    if not values.get("url"):
        return None
    return WebDavAccount(
        url=str(values["url"]),
        user=str(values.get("user", "")),
        folder=str(values.get("folder") or "Margin"),
        enabled=values.get("enabled") is True,
        books=values.get("books") is True,
    )


def _client(acc: WebDavAccount, password: str | None) -> WebDav:
    return WebDav(acc.url, acc.user, password or "")


def setup(paths: Paths, url: str, user: str, password: str, folder: str = "Margin") -> str:
    """Check the server (it must list or create ``folder``), then keep the account and turn
    sync on. Returns where the password went ("keyring", "session" or "none")."""
    acc = WebDavAccount(url.rstrip("/"), user, folder.strip("/") or "Margin", True)
    dav = _client(acc, password)
    if dav.list(acc.folder) is None:
        dav.mkdirs(acc.folder)
    values = config.table(paths, TABLE)  # keeps "books" and anything else set by hand
    values.update(url=acc.url, user=user, folder=acc.folder, enabled=True)
    config.save_table(paths, TABLE, values)
    if not password:
        return "none"
    return secrets.set_password("webdav", acc.url, user, password)


def turn_off(paths: Paths) -> None:
    values = config.table(paths, TABLE)
    values["enabled"] = False
    config.save_table(paths, TABLE, values)


def engine(library: Library, paths: Paths) -> SyncEngine:
    acc = account(paths)
    if acc is None or not acc.enabled:
        raise SyncError(
            "not_configured",
            "Sync between your computers is off; nothing was sent.",
            hint="Turn it on in Settings → Sync, or with 'margin sync --setup URL --user NAME'.",
        )
    password = secrets.get_password("webdav", acc.url, acc.user) if acc.user else None
    if acc.user and not password:
        raise SyncError(
            "no_password",
            f"Margin has no password for {acc.user} at {acc.url}.",
            hint="Set it up again, or set MARGIN_WEBDAV_PASSWORD.",
        )
    books = None
    if acc.books:
        from core.books.importer import import_book

        def books(path: Path) -> object:
            return import_book(library, path)

    return SyncEngine(
        library.db,
        config.device_id(paths),
        _client(acc, password),
        acc.folder,
        books=books,
        data_dir=paths.data,
    )


def sync_now(library: Library, paths: Paths) -> SyncReport:
    """One sync (blocking: run it off the window's thread)."""
    sync = engine(library, paths)
    lock_path = paths.data / "sync.lock"
    with open(lock_path, "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncError(
                "busy",
                "Another Margin is syncing this library right now.",
                hint="Wait for it to finish.",
            ) from None
        try:
            return sync.run()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
