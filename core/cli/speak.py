"""``margin speak BOOK [--page N] [--list]``: read a book aloud from a page, or list what
would be said (one utterance a line: page, start-end in the page's text, the words).

Speaking goes through the window's own speech module (Qt's text to speech, the system's
voices) in a child process, so this package stays free of Qt; ``--list`` needs neither."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

from core.cli.context import CliContext, number, say
from core.errors import MarginError

# (core.speech is imported by the command itself: every other command, ``margin import``
# among them, registers this one and would pay for it)

SPEAKER = "desktop.readaloud.say"  # reads utterances on stdin, says each one


def cmd_speak(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.speech import NoText, plan_book
    from core.speech import settings as read_aloud_settings

    book = ctx.library.find_book(args.book)
    page = args.page or book.page or 1
    if page > book.page_count:
        raise MarginError(
            "bad_page",
            f'"{book.title}" has pages 1 to {book.page_count}; there is no page {page}.',
        )
    try:
        utterances = plan_book(
            lambda n: ctx.library.page(book.id, n).text, book.page_count, page, book.format
        )
    except NoText as exc:
        say(f"margin: {exc}", file=sys.stderr)
        return 1
    if args.list:
        for u in utterances:
            say(f"{u.page}\t{u.start}-{u.end}\t{u.text}")
        return 0
    # the bundle's launcher runs the speaking half itself (it has no ``python -m``)
    prefix = ["--speak-child"] if getattr(sys, "frozen", False) else ["-m", SPEAKER]
    kept, problems = read_aloud_settings.load(ctx.paths)  # the window's voice and speed
    for problem in problems:
        say(f"margin: {problem}", file=sys.stderr)
    command = [sys.executable, *prefix, "--language", book.language or ""]
    command += ["--rate", str(kept.rate), "--voice", kept.voice]
    command += ["--voice-language", kept.voice_language]
    with subprocess.Popen(command, stdin=subprocess.PIPE, text=True) as child:
        assert child.stdin is not None
        try:
            for u in utterances:
                child.stdin.write(f"{u.page}\t{' '.join(u.text.split())}\n")
                child.stdin.flush()
        except BrokenPipeError:  # the speaker stopped (no engine: it said why)
            pass
        finally:
            try:
                child.stdin.close()
            except BrokenPipeError:
                pass
    return child.returncode


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "speak", help="read a book aloud from a page with the system's voices (--list: only print)"
    )
    p.add_argument("book", metavar="BOOK", help="book number or start of its title")
    p.add_argument("--page", type=number, default=None, help="start here (default: your page)")
    p.add_argument(
        "--list",
        action="store_true",
        help="print, one a line, what would be said (page, offsets, words), without speaking",
    )
    p.set_defaults(handler=cmd_speak)
