"""``margin repair``: rebuild the search index and re-read damaged stored text, in place."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.context import CliContext, say
from core.store.library import BookInfo


def cmd_repair(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.books.repair import repair_library

    if args.book is None and not args.all:
        say(
            "margin: name a book to repair, or use --all. See 'margin repair --help'.",
            file=sys.stderr,
        )
        return 2
    ids = None if args.all else [ctx.library.find_book(args.book).id]

    def show(done: int, total: int, book: BookInfo) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rChecking {done + 1} of {total}…")
            sys.stderr.flush()

    report = repair_library(ctx.library, ids, progress=show)
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 40 + "\r")
    say(report.summary())
    return 0 if report.index_complete and not report.failed else 1


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "repair",
        help="rebuild the search index and re-read damaged book text from the copies "
        "(notes, highlights and conversations are kept)",
    )
    p.add_argument("book", metavar="BOOK", nargs="?", help="book number or start of its title")
    p.add_argument("--all", action="store_true", help="check every book")
    p.set_defaults(handler=cmd_repair)
