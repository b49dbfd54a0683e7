"""``margin kosync``: reading progress with KOReader (login, push, pull, logout)."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import sys
from typing import Any

from core.cli.context import CliContext, say
from core.sync.errors import SyncError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("kosync", help="reading progress with KOReader's sync server")
    ks = p.add_subparsers(dest="kosync_command", metavar="ACTION", required=True)
    login = ks.add_parser("login", help="check an account and keep it (password in the keyring)")
    login.add_argument("--server", default="https://sync.koreader.rocks", metavar="URL")
    login.add_argument("--user", required=True, metavar="NAME")
    login.add_argument("--register", action="store_true", help="create the account first")
    login.set_defaults(handler=cmd_login)
    out = ks.add_parser("logout", help="forget the account and its password")
    out.set_defaults(handler=cmd_logout)
    for name, handler, text in (
        ("push", cmd_push, "send this book's position to the server"),
        ("pull", cmd_pull, "move to the position another device sent"),
    ):
        q = ks.add_parser(name, help=text)
        q.add_argument("book", metavar="BOOK", help="book number or start of its title")
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        if name == "pull":
            q.add_argument(
                "--read-to",
                action="store_true",
                help="also move 'read to' (the spoiler bound) there",
            )
        q.set_defaults(handler=handler)


def _password() -> str:
    env = os.environ.get("MARGIN_KOSYNC_PASSWORD", "")
    if env:
        return env
    if not sys.stdin.isatty():
        raise SyncError(
            "no_password",
            "No password: type it at the prompt or set MARGIN_KOSYNC_PASSWORD.",
        )
    return getpass.getpass("KOReader sync password: ")


def cmd_login(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sync.kosync import login

    where = login(ctx.paths, args.server, args.user, _password(), register=args.register)
    kept = "in the keyring" if where == "keyring" else "for this session only (no keyring)"
    say(f"Logged in to {args.server} as {args.user}; the password is kept {kept}.")
    return 0


def cmd_logout(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sync.kosync import logout

    logout(ctx.paths)
    say("KOReader progress sync is off; the password was removed.")
    return 0


def cmd_push(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sync.kosync import Kosync

    book = ctx.library.find_book(args.book)
    sent = Kosync(ctx.library, ctx.paths).push(book)
    if args.json:
        ctx.print_json(dataclasses.asdict(sent))
    else:
        say(f"Sent {book.title}: page {sent.page}, {sent.percentage:.1%} ({sent.progress}).")
    return 0


def cmd_pull(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sync.kosync import Kosync

    book = ctx.library.find_book(args.book)
    got = Kosync(ctx.library, ctx.paths).pull(book, apply_read_to=args.read_to)
    if got is None:
        if args.json:
            ctx.print_json(None)
        else:
            say(f"The server has no position for {book.title} yet.")
        return 0
    if args.json:
        ctx.print_json(dataclasses.asdict(got))
        return 0
    near = " (about)" if got.approximate else ""
    say(
        f"{book.title}: {got.device or 'another device'} is at {got.percentage:.1%}; "
        f"Margin is now at page {got.page}{near}."
    )
    if got.read_to_offer:
        say(
            f"'Read to' stays at page {got.read_to}; run again with --read-to to move it "
            f"to page {got.page}."
        )
    return 0
