"""``margin library add-calibre`` / ``refresh`` / ``calibre-highlights`` (a calibre library
as a source) and ``margin opds browse`` / ``get`` (OPDS catalogues)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from core.cli.context import CliContext, say


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("library", help="books from a calibre library, read in place")
    lib = p.add_subparsers(dest="library_command", metavar="ACTION", required=True)
    add = lib.add_parser(
        "add-calibre", help="add a calibre library's books (read in place, never written)"
    )
    add.add_argument("folder", metavar="DIR", help="the calibre library folder")
    add.add_argument(
        "--highlights", action="store_true", help="also import calibre's viewer highlights"
    )
    add.add_argument("--json", action="store_true")
    add.set_defaults(handler=cmd_add_calibre)
    ref = lib.add_parser("refresh", help="read the calibre libraries again where they changed")
    ref.add_argument("--json", action="store_true")
    ref.set_defaults(handler=cmd_refresh)

    from core.cli import opds

    opds.register(sub)


def _print(ctx: CliContext, reports: list[Any], as_json: bool) -> None:
    if as_json:
        ctx.print_json([dataclasses.asdict(r) for r in reports])
        return
    for r in reports:
        say(
            f"{r.folder}: {r.added} added, {r.updated} updated, {r.unchanged} unchanged"
            + (f", {r.gone} no longer in calibre (kept here)" if r.gone else "")
            + "."
        )
        for title in r.skipped:
            say(f"  skipped (no format Margin reads): {title}")
        for line in r.failed:
            say(f"  not added: {line}", file=sys.stderr)


def cmd_add_calibre(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sources.calibre_import import import_highlights, refresh, remember

    folder = Path(args.folder).expanduser().resolve()
    report = refresh(ctx.library, folder, force=True)
    remember(ctx.paths, folder)
    _print(ctx, [report], args.json)
    if args.highlights:
        added = import_highlights(ctx.library, folder)
        if not args.json:
            say(f"Imported {added} highlight{'s' * (added != 1)} from calibre's viewer.")
    return 0


def cmd_refresh(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sources.calibre_import import libraries, refresh

    reports = [refresh(ctx.library, folder) for folder in libraries(ctx.paths)]
    if not reports and not args.json:
        say("No calibre library was added; add one with 'margin library add-calibre DIR'.")
    _print(ctx, reports, args.json)
    return 0
