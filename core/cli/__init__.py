"""The ``margin`` subcommands: the headless face of Margin's use cases.

The ``margin`` entry point (``desktop/app.py``) opens the window or sends subcommands here;
this package never imports the window. Command groups live beside this file and register
themselves: ``library`` (books, search, pages) and ``chat`` (asking the agent).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from core.cli.output import say

if TYPE_CHECKING:
    import argparse

# Light on purpose (no logging, no app, no peewee, no argparse here): ``margin search --all``
# is answered by ``core.cli.search_all`` with the standard sqlite3 module; ``_run`` imports
# the rest.


GROUPS = (
    "library",
    "chat",
    "repair",
    "threads",
    "companions",
    "kosync",
    "sync",
    "sources",
    "speak",
)
"""The modules of ``core.cli`` that register command groups, in the order of the help."""
OWN_PARSER = {"import": ("library", "register_import")}
"""Commands whose parser is built with that command alone (module of ``core.cli``, its
function): all of them cost about 10 ms of imports and argparse, 2 % of ``margin import``
of a 3 MB text, and the rest of its group 3 ms more (issue 41)."""


def build_parser(command: str = "") -> argparse.ArgumentParser:
    """The parser of every command, or, for a command of ``OWN_PARSER``, its own alone."""
    import importlib

    from core.cli.parser import Parser

    own = OWN_PARSER.get(command)
    parser = Parser(
        prog="margin",
        description="Margin: read a book and talk about it with an AI that cites its pages. "
        "Run 'margin' with no command to open the window.",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="keep the library in DIR")
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if own:
        getattr(importlib.import_module(f"core.cli.{own[0]}"), own[1])(sub)
    for name in () if own else GROUPS:
        importlib.import_module(f"core.cli.{name}").register(sub)
    return parser


ANSWERING = ("ask", "chat")
CLI_NOT_FOUND = (
    "List your books with 'margin books' and a book's conversations with "
    "'margin conversations BOOK'."
)


def _command_of(args: list[str]) -> str:
    """The subcommand, read before argparse (``--data-dir DIR`` may come first)."""
    rest = iter(args)
    for word in rest:
        if word == "--data-dir":
            next(rest, None)
        elif not word.startswith("-"):
            return word
    return ""


def main(argv: Sequence[str] | None = None, *, fast_exit: bool = False) -> int:
    """Run one ``margin`` subcommand; returns the exit status. ``fast_exit`` (the real
    process, never a test calling this) ends an answering command with ``os._exit`` once
    its output is flushed and its database closed (interpreter teardown after importing the
    SDK takes longer than the answer's last line), and makes SIGTERM clean up like Ctrl+C."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # (Importing the SDK on a thread while this one parses and opens the database was
    # measured slower here: both are CPU-bound under the GIL; see tests/bench/bench_cli.py.)
    command = _command_of(args_list)
    if fast_exit and command in SETTLED:
        # no cyclic collection in a process that ends as soon as its books are stored: the
        # import already pauses it while it parses and stores (core.books.memory.gc_paused),
        # and the collections that loading Margin's modules sets off find nothing to free
        # (about 2 % of importing a 3 MB text, issue 41)
        gc.disable()
    code = _quick(args_list)  # (read-only: nothing to clean up when it is stopped)
    if code is None:
        if fast_exit:  # the real process: SIGTERM cleans up like Ctrl+C (no copy left behind)
            import signal

            signal.signal(signal.SIGTERM, _terminated)
        code = _run(args_list)
    if fast_exit and (command in ANSWERING or (command in SETTLED and _nothing_running())):
        _exit_now(code)
    return code


SETTLED = ("import",)
"""Commands that end the real process with ``os._exit`` too once their work is stored and
nothing else runs: the interpreter's tear-down after importing a book (its modules, a last
collection) cost 35-50 ms of CPU on a 3 MB text, 5-8 % of the whole import (issue 41)."""


def _nothing_running() -> bool:
    """Only this thread is left, and no child processes that multiprocessing would end at
    exit (a PDF's text workers): nothing an ``os._exit`` could cut short."""
    threading = sys.modules.get("threading")
    alone = threading is None or threading.active_count() == 1
    return alone and "multiprocessing" not in sys.modules


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _exit_now(code: int) -> NoReturn:
    if "core.search.vectors" in sys.modules:  # loaded: a worker may be running
        from core.search.vector_indexer import stop_all_now

        stop_all_now()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    os._exit(code)


def _quick(args_list: list[str]) -> int | None:
    """A read-only ``search --all`` answered without the rest of Margin; None: not one
    (or not one it can answer alone: the full command runs and explains)."""
    if _command_of(args_list) != "search" or "--all" not in args_list:
        return None
    from core.cli.search_all import quick

    return quick(args_list)


def _run(args_list: list[str]) -> int:
    import logging

    from core.cli.context import CliContext
    from core.errors import MarginError
    from core.store.db_base import explain

    log = logging.getLogger("margin.cli")
    if "--version" in args_list[:1]:
        from core.version import version_text

        print(version_text())
        return 0
    command = _command_of(args_list)
    before = args_list[: args_list.index(command)] if command else args_list
    parser = build_parser("" if {"-h", "--help"} & set(before) else command)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as done:  # --help, or a usage error already printed in one line
        return done.code if isinstance(done.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 0
    ctx = CliContext.create(args.data_dir)
    ctx.background = args.command in ANSWERING
    try:
        return int(args.handler(args, ctx) or 0)
    except MarginError as exc:
        log.info("command failed: %s (%s)", exc.message, exc.code)
        if exc.code == "not_found" and not exc.hint:  # core's words fit a window too
            exc.hint = CLI_NOT_FOUND
        say(f"margin: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("margin: stopped.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        known = explain(exc)
        if known is not None:
            log.warning("'margin %s' failed: %s", args.command, known.message, exc_info=exc)
            say(f"margin: {known}", file=sys.stderr)
            return 1
        log.exception("unexpected error in 'margin %s'", args.command)
        print(
            f"margin: something went wrong that Margin did not expect. "
            f"The details are in {ctx.paths.logs / 'margin.log'}.",
            file=sys.stderr,
        )
        return 70
    finally:
        ctx.close()
