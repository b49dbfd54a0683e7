"""The ``margin`` subcommands: the headless face of Margin's use cases.

The ``margin`` entry point (``desktop/app.py``) opens the window or sends subcommands here;
this package never imports the window. Command groups live beside this file and register
themselves: ``library`` (books, search, pages) and ``chat`` (asking the agent).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from core.cli.context import CliContext
from core.errors import MarginError

log = logging.getLogger("margin.cli")


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


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args_list[:1]:
        from core.version import version_text

        print(version_text())
        return 0
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
