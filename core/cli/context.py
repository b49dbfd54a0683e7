"""What every CLI command gets: the folders, the app object (opened on first use), output.

Everything a command prints goes through ``clean`` (``say``/``print_json``): text from books
and models may hold terminal escape sequences (ESC/CSI, OSC 52 sets the clipboard) and lone
surrogates (which cannot be written as UTF-8). C0 and C1 controls other than newline and tab
are removed; lone surrogates become U+FFFD.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.app import Margin
from core.log import setup_logging
from core.paths import Paths, resolve_paths
from core.store.library import Library

# C0 controls except \t and \n, DEL, C1 controls (U+0080..U+009F), bidirectional overrides,
# embeddings and isolates (a title with U+202E prints reversed, issue 46 item 12), and lone
# surrogates.
_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udfff]"
)
LARGEST_NUMBER = 1_000_000_000


def clean(text: object) -> str:
    """``text`` safe to print: no terminal controls (newline and tab kept), no lone
    surrogates (each becomes U+FFFD)."""
    value = str(text)
    return _UNSAFE.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else "", value)


def say(*parts: object, file: Any = None, end: str = "\n", sep: str = " ") -> None:
    """``print`` for text that may come from a book or a model."""
    stream = sys.stdout if file is None else file
    stream.write(clean(sep.join(str(p) for p in parts)) + end)


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
    paths: Paths
    _app: Margin | None = field(default=None, repr=False)
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
            self._app = Margin.open(self.paths, on_wait=_say_waiting)
            if not self.background:
                self._app.library.db.margin_no_background = True  # type: ignore[attr-defined]
        return self._app

    @property
    def library(self) -> Library:
        return self.app.library

    def close(self) -> None:
        if self._app is not None:
            self._app.close()

    @staticmethod
    def print_json(value: Any) -> None:
        """JSON on stdout: C0 controls are escaped by JSON itself, DEL and C1 controls are
        escaped here (``\\u009b``), lone surrogates become U+FFFD."""
        text = json.dumps(clean_json_surrogates(value), ensure_ascii=False, indent=2, default=str)
        text = _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        sys.stdout.write(text + "\n")

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


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_C1 = re.compile(r"[\x7f-\x9f]")


def clean_json_surrogates(value: Any) -> Any:
    """JSON output keeps every character (JSON escapes controls) but lone surrogates."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {clean_json_surrogates(k): clean_json_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json_surrogates(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses

        return clean_json_surrogates(dataclasses.asdict(value))
    return value
