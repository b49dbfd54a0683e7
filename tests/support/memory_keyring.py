"""An in-memory keyring backend so tests never read or write the real system keyring."""

from __future__ import annotations

from typing import ClassVar

from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]
    _store: ClassVar[dict[tuple[str, str], str]] = {}

    @classmethod
    def clear(cls) -> None:
        cls._store.clear()

    def get_password(self, service: str, username: str) -> str | None:
        return self._store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if (service, username) not in self._store:
            raise PasswordDeleteError("no such password")
        del self._store[(service, username)]


class CountingKeyring(MemoryKeyring):
    """The in-memory keyring, counting reads and the threads they came from (each read of a
    locked GNOME keyring is a prompt)."""

    reads: ClassVar[list[str]] = []

    def get_password(self, service: str, username: str) -> str | None:
        import threading

        self.reads.append(threading.current_thread().name)
        return super().get_password(service, username)
