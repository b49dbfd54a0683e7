"""What every CLI command gets: the folders, the app object (opened on first use), output.

Everything a command prints goes through ``clean`` (``say``/``print_json``): text from books
and models may hold terminal escape sequences (ESC/CSI, OSC 52 sets the clipboard) and lone
surrogates (which cannot be written as UTF-8). C0 and C1 controls other than newline and tab
are removed; lone surrogates become U+FFFD.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.cli.output import clean, clean_json_surrogates, print_json, say  # noqa: F401
from core.log import setup_logging
from core.paths import Paths, resolve_paths

if TYPE_CHECKING:  # (loaded when a command first needs them: ``margin import`` never does)
    from core.app import Margin
    from core.store.import_library import ImportLibrary
    from core.store.library import Library

LARGEST_NUMBER = 1_000_000_000


def number(text: str) -> int:
    """argparse type for page numbers, ids and limits: a whole number from 1 to a billion
    (SQLite cannot hold much larger integers; no library has that many pages)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{clean(text)!r} is not a whole number") from None
    if not 1 <= value <= LARGEST_NUMBER:
        raise argparse.ArgumentTypeError(
            f"{value if len(str(value)) < 20 else str(value)[:12] + '…'} is out of range "
            f"(use a number from 1 to {LARGEST_NUMBER:,})"
        )
    return value


def _say_waiting() -> None:
    say(
        "margin: another Margin is updating the library for this version; "
        "waiting for it to finish…",
        file=sys.stderr,
    )
    sys.stderr.flush()


@dataclass
class CliContext:
    """The folders, the app (opened on first use) and output of one CLI command."""

    paths: Paths
    _app: Margin | None = field(default=None, repr=False)
    _importing: ImportLibrary | None = field(default=None, repr=False)
    # background vectors: only for a command that lives long enough to store them (``chat``);
    # a short one (``import``, ``search``) leaves them to the next search or window
    background: bool = False

    @classmethod
    def create(cls, data_dir: str | None) -> CliContext:
        paths = resolve_paths(data_dir)
        try:
            paths.ensure()
            setup_logging(paths)
        except OSError:
            # opening the library below reports an unusable folder in words (or opens a
            # read-only one for reading); the log has nowhere to go, and never the terminal
            logging.getLogger().addHandler(logging.NullHandler())
        return cls(paths)

    @property
    def app(self) -> Margin:
        if self._app is None:
            from core.app import Margin

            self._app = Margin.open(self.paths, on_wait=_say_waiting)
            if not self.background:
                self._app.library.db.margin_no_background = True  # type: ignore[attr-defined]
        return self._app

    @property
    def library(self) -> Library:
        return self.app.library

    def importing(self) -> Library | ImportLibrary:
        """The library as ``margin import`` writes to it: without peewee when it can be
        (``core.store.import_library``: a library at this version, or a new one), else the
        whole library (which updates an older one, or explains why it cannot open)."""
        if self._app is None and self._importing is None:
            from core.store.import_library import open_for_import

            self._importing = open_for_import(self.paths, on_wait=_say_waiting)
        if self._importing is not None:
            return self._importing
        return self.library

    def close(self) -> None:
        if self._importing is not None:
            self._importing.close()
        if self._app is not None:
            self._app.close()

    @staticmethod
    def print_json(value: Any) -> None:
        """JSON on stdout: C0 controls are escaped by JSON itself, DEL and C1 controls are
        escaped here (``\\u009b``), lone surrogates become U+FFFD."""
        print_json(value)

    @classmethod
    def print_list(
        cls, items: Sequence[Any], line: Callable[[Any], str], *, as_json: bool, empty: str
    ) -> int:
        """A list command's output: the records as JSON, else a line per item (``empty`` when
        there is none). Returns the exit status."""
        if as_json:
            cls.print_json(list(items))
            return 0
        if not items:
            say(empty)
        for item in items:
            say(line(item))
        return 0
