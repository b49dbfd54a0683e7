"""Where Margin keeps its files.

Data (the library database, book copies, logs, event logs) lives in the user data folder;
settings live in the user config folder. ``MARGIN_HOME`` (or ``--data-dir``) moves both into
one folder, which is what tests and portable installs use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "Margin"


def event_log_name(conversation_id: int) -> str:
    return f"conversation-{conversation_id}.jsonl"


def companions_log_name(book_id: int) -> str:
    """A book's companion jobs' event log (``core.companions.trace``), deleted with it."""
    return f"companions-book-{book_id}.jsonl"


@dataclass(frozen=True)
class Paths:
    """Where Margin keeps its library, settings, logs and caches."""

    data: Path
    config: Path

    @property
    def database(self) -> Path:
        return self.data / "library.sqlite3"

    @property
    def books(self) -> Path:
        """Copies of imported books (PDFs are rendered from here, EPUB images read from here)."""
        return self.data / "books"

    @property
    def logs(self) -> Path:
        return self.data / "logs"

    @property
    def event_logs(self) -> Path:
        return self.data / "events"

    def event_log(self, conversation_id: int) -> Path:
        """A conversation's event log (``core.agent.eventlog``), deleted with it."""
        return self.event_logs / event_log_name(conversation_id)

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.toml"

    def ensure(self) -> Paths:
        for p in (self.data, self.config, self.books, self.logs, self.event_logs):
            p.mkdir(parents=True, exist_ok=True)
        return self


def resolve_paths(data_dir: str | os.PathLike[str] | None = None) -> Paths:
    """Explicit folder > ``MARGIN_HOME`` > the platform's user folders."""
    chosen = data_dir or os.environ.get("MARGIN_HOME")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        return Paths(data=root, config=root)
    import platformdirs

    return Paths(
        data=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        config=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
    )
