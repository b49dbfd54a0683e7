"""``Margin``: the one object that owns the app's services.

The CLI and the window each hold one (``Margin.open(paths)``) and hand what they need to
their commands and widgets through constructors. It owns the database (and the threads
database work runs on), the library, the conversations, search, settings, the API key store
and the agent service. Nothing in ``core`` reaches a module-level database.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import peewee as pw

from core.errors import StorageError
from core.paths import Paths
from core.progress import CancelToken, ProgressCallback, no_progress
from core.store.library import Library

if TYPE_CHECKING:  # made on first use: the window shows before it needs them (~50 ms)
    from core.agent.service import AgentService  # the agent (and the SDK) load on first use
    from core.books.importer import ImportResult
    from core.search import BookSearch
    from core.settings import Settings
    from core.store.conversations import Conversations

DB_THREADS = 4


class Secrets:
    """The API key: environment, system keyring, or this session only — never a file."""

    def get(self) -> str | None:
        from core.api_key import get_api_key
        from core.log import register_secret

        key = get_api_key()
        register_secret(key)
        return key

    def set(self, key: str) -> str:
        from core.api_key import set_api_key

        return set_api_key(key)

    def delete(self) -> None:
        from core.api_key import delete_api_key

        delete_api_key()


@dataclass
class Margin:
    """The app's services for one library (``Margin.open``)."""

    paths: Paths
    library: Library
    secrets: Secrets
    executor: ThreadPoolExecutor
    _settings: Settings | None = None
    _agent: AgentService | None = field(default=None, repr=False)
    _conversations: Conversations | None = field(default=None, repr=False)
    _search: BookSearch | None = field(default=None, repr=False)

    @classmethod
    def open(cls, paths: Paths, *, on_wait: Callable[[], None] | None = None) -> Margin:
        """Open (creating if needed) the library in ``paths`` (``on_wait``: see
        ``Library.open``)."""
        return cls.of(Library.open(paths, on_wait=on_wait))

    @classmethod
    def of(cls, library: Library) -> Margin:
        """The app around a library that is already open."""
        paths = library.paths
        return cls(
            paths=paths,
            library=library,
            secrets=Secrets(),
            executor=ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="margin-db"),
        )

    @property
    def db(self) -> pw.SqliteDatabase:
        return self.library.db

    @property
    def conversations(self) -> Conversations:
        if self._conversations is None:
            from core.store.conversations import Conversations

            self._conversations = Conversations(self.library.db)
        return self._conversations

    @property
    def search(self) -> BookSearch:
        if self._search is None:
            from core.search import BookSearch

            self._search = BookSearch(self.library.db)
        return self._search

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from core.settings import load_settings

            self._settings = load_settings(self.paths)
        return self._settings

    def reload_settings(self) -> Settings:
        from core.settings import load_settings

        self._settings = load_settings(self.paths)
        if self._agent is not None:
            self._agent.update_settings(self._settings)
        return self._settings

    def mode(self) -> str:
        """ "anthropic", "local" or "passages": what a question asked now would use (without
        building the agent service, so the window can show it at start-up for free)."""
        if self._agent is not None:
            return self._agent.mode()
        from core.api_key import known_api_key  # (never reads the keyring: it may prompt)

        return self.settings.effective_provider(bool(known_api_key()))

    @property
    def agent(self) -> AgentService:
        """The agent service (built on first use)."""
        if self._agent is None:
            from core.agent.service import AgentService

            self._agent = AgentService(
                self.library,
                self.paths,
                self.settings,
                conversations=self.conversations,
                search=self.search,
                executor=self.executor,
            )
        return self._agent

    @agent.setter
    def agent(self, service: AgentService) -> None:
        self._agent = service

    def import_book(
        self,
        path: Path | str,
        *,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        password: str | None = None,
    ) -> ImportResult:
        from core.books.importer import import_book

        return import_book(self.library, path, progress=progress, cancel=cancel, password=password)

    def tidy_up(self) -> int:
        """After a crash: remove half-imported books and temporary copies whose import is
        gone, mark answers whose process is gone "interrupted". Never touches a finished
        copy (see ``unlisted_copies``) or what another live process owns. Returns how many
        things were tidied."""
        from core.books.importer import recover_incomplete

        return recover_incomplete(self.library) + self.conversations.recover_interrupted()

    def unlisted_copies(self) -> list[Path]:
        """Book copies in the books folder that no book in the database names (the database
        was lost or replaced). Tidying never deletes them; offer ``recover_library``."""
        from core.books.importer import unlisted_copies

        return unlisted_copies(self.library)

    def recover_library(
        self,
        *,
        progress: Callable[[int, int, Path], None] = lambda done, total, path: None,
        cancel: CancelToken | None = None,
    ) -> list[Any]:
        """Import again every unlisted copy (blocking: run it off the UI thread). Returns
        ``core.books.importer.RecoveredCopy`` records (a result or an error per copy)."""
        from core.books.importer import recover_library

        return recover_library(self.library, progress=progress, cancel=cancel)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        if "core.search.vectors" in sys.modules:  # background vectors end with the library
            from core.search.vector_indexer import stop_for

            stop_for(self.library.db)
        self.library.close()


__all__ = ["Margin", "Secrets", "StorageError"]
