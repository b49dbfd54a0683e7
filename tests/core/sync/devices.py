"""Two (or more) Margin data folders in one test process, each a device that syncs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.app import Margin
from core.paths import Paths
from core.store.library import Library
from core.store.models import ALL_MODELS
from core.sync.engine import SyncEngine, SyncReport
from core.sync.webdav import WebDav


class Device:
    def __init__(self, root: Path, name: str, url: str, user: str, password: str) -> None:
        self.paths = Paths(data=root / name, config=root / name).ensure()
        self.library = Library.open(self.paths)
        self.app = Margin.of(self.library)
        self.name = name
        self.url, self.user, self.password = url, user, password

    @property
    def db(self) -> Any:
        return self.library.db

    def use(self) -> Library:
        """The library, with the models bound to it (one library per process in the app)."""
        self.db.bind(ALL_MODELS, bind_refs=False, bind_backrefs=False)
        return self.library

    def import_book(self, path: Path) -> int:
        self.use()
        return self.app.import_book(path).book.id

    def sync(self, *, books: bool = False) -> SyncReport:
        from core.books.importer import import_book

        engine = SyncEngine(
            self.db,
            self.name,
            WebDav(self.url, self.user, self.password),
            "M",
            books=(lambda path: import_book(self.use(), path)) if books else None,
            data_dir=self.paths.data,
        )
        return engine.run()

    def notes(self) -> list[tuple[str, int | None]]:
        return sorted(
            (text, page) for text, page in self.db.execute_sql("SELECT text, page FROM note")
        )

    def highlights(self) -> list[tuple[str, str, str]]:
        return sorted(self.db.execute_sql("SELECT text, note, colour FROM highlight"))

    def close(self) -> None:
        self.app.close()
