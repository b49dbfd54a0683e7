"""The parser of the ``margin`` subcommands: argparse with one-line usage errors, sized for the
terminal without loading shutil. Loaded by ``core.cli.build_parser`` only (a read-only
``margin search --all`` needs no argparse: 1.8 ms with gettext, issue 41)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from core.cli.output import clean


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {clean(message)}. See '{self.prog} --help'.\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's own sizes its help with shutil.get_terminal_size, and loads shutil (with
        # bz2 and lzma: 2 ms of ``margin import``, issue 41) at the first add_argument
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
