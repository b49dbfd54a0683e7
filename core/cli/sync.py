"""``margin sync``: sync with the reader's other computers through a WebDAV folder."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import sys
from typing import Any

from core.cli.context import CliContext, say


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "sync",
        help="sync highlights, notes, conversations and positions with your other computers "
        "through a WebDAV folder ([webdav] in settings.toml)",
    )
    p.add_argument("--setup", metavar="URL", help="check a WebDAV folder and turn sync on")
    p.add_argument("--user", metavar="NAME", default="", help="the WebDAV user (with --setup)")
    p.add_argument("--folder", metavar="NAME", default="Margin", help="folder on the server")
    p.add_argument("--off", action="store_true", help="turn sync off (nothing is sent)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_sync)


def _password(user: str) -> str:
    env = os.environ.get("MARGIN_WEBDAV_PASSWORD", "")
    if env or not user:
        return env
    if not sys.stdin.isatty():
        return ""
    return getpass.getpass(f"WebDAV password for {user}: ")


def cmd_sync(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sync import service

    if args.off:
        service.turn_off(ctx.paths)
        say("Sync between computers is off.")
        return 0
    if args.setup:
        where = service.setup(ctx.paths, args.setup, args.user, _password(args.user), args.folder)
        kept = {
            "keyring": " (password in the keyring)",
            "session": " (password for this session only: no keyring)",
            "none": "",
        }[where]
        say(f"Sync is on with {args.setup}, folder {args.folder}{kept}.")
    report = service.sync_now(ctx.library, ctx.paths)
    if args.json:
        ctx.print_json(dataclasses.asdict(report))
    else:
        say(f"Synced: {report.summary()}")
        for problem in report.problems:
            say(f"note: {problem}", file=sys.stderr)
    return 0
