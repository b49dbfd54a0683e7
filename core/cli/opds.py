"""``margin opds browse URL`` and ``margin opds get URL ENTRY``."""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from core.cli.context import CliContext, say


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("opds", help="browse OPDS catalogues and download books from them")
    ops = p.add_subparsers(dest="opds_command", metavar="ACTION", required=True)
    browse = ops.add_parser("browse", help="list a catalogue feed's entries")
    browse.add_argument("url", metavar="URL")
    browse.add_argument("--search", metavar="TEXT", help="search the catalogue (OpenSearch)")
    browse.add_argument("--json", action="store_true")
    browse.set_defaults(handler=cmd_browse)
    get = ops.add_parser("get", help="download an entry's book into the library")
    get.add_argument("url", metavar="URL", help="the feed that lists the entry")
    get.add_argument("entry", metavar="ENTRY", help="its number, id or the start of its title")
    get.set_defaults(handler=cmd_get)


def cmd_browse(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sources.opds import fetch, search_url

    feed = fetch(args.url)
    if args.search:
        feed = fetch(search_url(feed, args.search))
    if args.json:
        data = dataclasses.asdict(feed)
        data["kind"] = feed.kind
        for entry, raw in zip(feed.entries, data["entries"], strict=True):
            raw["cover"] = entry.cover
            nav = entry.navigation
            raw["navigation"] = nav.href if nav else ""
            best = entry.best_download()
            raw["download"] = best.href if best else ""
        ctx.print_json(data)
        return 0
    say(f"{feed.title or feed.url} ({feed.kind}, {len(feed.entries)} entries)")
    for n, entry in enumerate(feed.entries, start=1):
        by = f" — {', '.join(entry.authors)}" if entry.authors else ""
        nav = entry.navigation
        where = f"  → {nav.href}" if nav and not entry.acquisitions else ""
        say(f"{n:3}. {entry.title}{by}{where}")
    if feed.next:
        say(f"More: {feed.next}")
    return 0


def cmd_get(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.sources.opds import download, fetch
    from core.sync.errors import SyncError

    feed = fetch(args.url)
    entry = feed.find(args.entry)
    link = entry.best_download()
    if link is None:
        raise SyncError(
            "no_format",
            f"{entry.title!r} has no download in a format Margin reads.",
            hint="Margin reads EPUB, PDF, text, Markdown, HTML and comic archives.",
        )
    data, suffix = download(link)
    with tempfile.TemporaryDirectory(prefix="margin-opds-") as tmp:
        safe = "".join(c if c.isalnum() or c in " -_" else "_" for c in entry.title)[:80]
        path = Path(tmp) / f"{safe.strip() or 'book'}{suffix}"
        path.write_bytes(data)
        result = ctx.app.import_book(path)
    book = result.book
    state = "was already in the library" if result.already_present else "added to the library"
    say(f"{book.title} {state} (book {book.id}, {book.page_count} pages).")
    return 0
