"""`margin threads BOOK` (conversations about a passage, in book order) and `margin lost
BOOK` (what points into the book but was not found when it was last read again)."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli.context import CliContext, say

KINDS = {
    "highlight": "highlight",
    "note": "note",
    "thread": "thread",
    "citation": "answer's source",
}


def say_lost(ctx: CliContext, book_id: int) -> int:
    """Print what was lost (nothing when everything was found); returns how many."""
    lost = ctx.library.lost_anchors(book_id)
    if not lost:
        return 0
    say(
        f"Not found in the book's text any more ({len(lost)}): kept at their old pages, "
        f"never moved by guess ('margin lost {book_id}' lists them again):"
    )
    for a in lost:
        words = " ".join(a.text.split())
        short = words if len(words) <= 80 else words[:79] + "…"
        say(f"  p. {a.page:<5} {KINDS.get(a.kind, a.kind)} {a.id}: “{short}”")
    return len(lost)


def cmd_lost(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    if args.json:
        ctx.print_json(ctx.library.lost_anchors(book.id))
        return 0
    if not say_lost(ctx, book.id):
        say(f'Everything in "{book.title}" is on its words.')
    return 0


def cmd_threads(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    threads = ctx.app.conversations.threads(book.id)
    return ctx.print_list(
        [
            {
                "id": t.id,
                "title": t.title,
                "messages": t.message_count,
                "updated_at": t.updated_at.isoformat(),
                "quote": t.quote.to_json() if t.quote else None,
            }
            for t in threads
        ]
        if args.json
        else threads,
        _thread_line,
        as_json=args.json,
        empty=f'No threads in "{book.title}" yet: ask about a passage you select.',
    )


def _thread_line(t: Any) -> str:
    lost = "  (its passage was not found when the book was read again)" if t.quote.lost else ""
    return f"{t.id:>4}  {t.about}  ({t.message_count} messages){lost}"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("threads", help="a book's conversations about passages, in book order")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_threads)
    p = sub.add_parser(
        "lost", help="what no longer matches the book's text after it was read again"
    )
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_lost)
