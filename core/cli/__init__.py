"""The ``margin`` command: the headless face of Margin's use cases.

``margin`` with no arguments (or with a book file, or with window options such as
``--open``/``--screenshot``) opens the window; everything else is a subcommand. Command
groups live beside this file and register themselves: ``library`` (books, search, pages) and
``chat`` (asking the agent).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from core.cli.context import CliContext
from core.errors import MarginError

log = logging.getLogger("margin.cli")

WINDOW_OPTIONS = ("--open", "--page", "--screenshot", "--exit-after-shown")
BOOK_SUFFIXES = (".epub", ".pdf", ".txt", ".text", ".md", ".markdown", ".html", ".htm", ".xhtml")


def build_parser() -> argparse.ArgumentParser:
    from core.cli import chat, library

    parser = argparse.ArgumentParser(
        prog="margin",
        description="Margin: read a book and talk about it with an AI that cites its pages. "
        "Run 'margin' with no command to open the window.",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="keep the library in DIR")
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    library.register(sub)
    chat.register(sub)
    return parser


def _wants_window(argv: Sequence[str]) -> bool:
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--data-dir":
        rest = rest[2:]
    elif rest and rest[0].startswith("--data-dir="):
        rest = rest[1:]
    if not rest:
        return True
    first = rest[0]
    if first.split("=", 1)[0] in WINDOW_OPTIONS:
        return True
    return Path(first).suffix.lower() in BOOK_SUFFIXES and Path(first).is_file()


def version_text() -> str:
    """Versions for bug reports. Inside the bundled app there is no package metadata, so the
    modules' own version attributes are the fallback."""
    from importlib import metadata

    def ver(dist: str, module: str, attribute: str = "__version__") -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
        try:
            value = getattr(__import__(module, fromlist=["_"]), attribute)
            return str(value() if callable(value) else value)
        except Exception:
            return "unknown"

    from core import __version__

    margin = __version__
    return (
        f"Margin {margin}\n"
        f"Python {sys.version.split()[0]}\n"
        f"Qt (PySide6) {ver('PySide6-Essentials', 'PySide6')}\n"
        f"anthropic SDK {ver('anthropic', 'anthropic')}\n"
        f"pypdfium2 {ver('pypdfium2', 'pypdfium2.version', 'PYPDFIUM_INFO')}, peewee {ver('peewee', 'peewee')}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args_list[:1]:
        print(version_text())
        return 0
    if _wants_window(args_list):
        from desktop.app import main as window_main

        return window_main(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 0
    ctx = CliContext.create(args.data_dir)
    try:
        return int(args.handler(args, ctx) or 0)
    except MarginError as exc:
        log.info("command failed: %s (%s)", exc.message, exc.code)
        print(f"margin: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("margin: stopped.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception:
        log.exception("unexpected error in 'margin %s'", args.command)
        print(
            f"margin: something went wrong that Margin did not expect. "
            f"The details are in {ctx.paths.logs / 'margin.log'}.",
            file=sys.stderr,
        )
        return 70
    finally:
        ctx.close()
