"""``margin xray``, ``margin recap`` and ``margin cards``: the companions, bounded by how far
the reader has read (``read_to``; the whole book once it is marked finished)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.context import CliContext, number, say


def model_job(args: argparse.Namespace, ctx: CliContext, book_id: int, **what: bool) -> int | None:
    """With ``--model``: plan the calls, say what they cost, check the budget, ask (unless
    ``--yes``), run them. None when there was nothing to do or it went well; else the
    exit status."""
    import asyncio

    from core.companions import model

    if not args.model:
        return None
    app = ctx.app
    provider = app.agent.provider()
    if provider.name == "passages":
        say(
            "margin: no model is connected, so the X-Ray and recap are made from the book "
            "alone. Connect one in the window's Settings, or set ANTHROPIC_API_KEY.",
            file=sys.stderr,
        )
        return 1
    db = app.library.db
    job = model.plan(db, book_id, provider.model, **what)
    if not job.calls:
        return None
    _u, chat_cost, _runs = app.conversations.book_usage(book_id)
    _u2, companion_cost = model.spent(db, book_id)
    model.check_budget(
        job, app.settings.budget_per_book_usd, (chat_cost or 0.0) + (companion_cost or 0.0)
    )
    say(f"{len(job.calls)} calls to {provider.model}: {job.describe()}.", file=sys.stderr)
    if not args.yes:
        if not sys.stdin.isatty():
            say("margin: add --yes to go ahead.", file=sys.stderr)
            return 2
        if input("Go ahead? [y/N] ").strip().lower() not in ("y", "yes"):
            return 1

    def show(done: int, total: int, title: str) -> None:
        if sys.stderr.isatty() and title:
            sys.stderr.write(f"\r{done + 1}/{total} {title[:50]:50}")
            sys.stderr.flush()

    index = app.agent.spoilers.get(db, book_id)
    used = asyncio.run(
        model.run(db, book_id, job, provider, index, progress=show, events=app.paths.event_logs)
    )
    say(
        f"Used {used.input_tokens:,} input and {used.output_tokens:,} output tokens.",
        file=sys.stderr,
    )
    return None


def show_trace(
    args: argparse.Namespace, ctx: CliContext, book_id: int, title: str, kind: str
) -> int:
    """``--trace``: every model call of the book's jobs of this kind, from its event log."""
    from core.companions import trace

    found = trace.jobs(ctx.paths.event_logs, book_id, {kind}, last=args.last)
    if args.json:
        ctx.print_json([j.to_json() for j in found])
        return 0
    if not found:
        say(f'No model calls yet for "{title}" here. Add --model to have them written.')
        return 0
    say(f'Model calls for "{title}" ({len(found)} job{"s" if len(found) != 1 else ""}):')
    say(trace.text(found))
    return 0


def cmd_xray(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.companions import xray

    book = ctx.library.find_book(args.book)
    if args.trace:
        return show_trace(args, ctx, book.id, book.title, "xray_note")
    edit = _xray_edit(args)
    if edit:
        xray.edit(ctx.library.db, book.id, *edit)
        say(f'X-Ray of "{book.title}": {" ".join(edit)} — kept (`margin xray` shows it).')
        return 0
    failed = model_job(args, ctx, book.id, recap=False, notes=True)
    if failed is not None:
        return failed
    made = xray.current(ctx.library.db, book.id)
    entries = list(made.entries)
    if args.name:
        found = made.find(args.name)
        if found is None:
            say(
                f'margin: no one called "{args.name}" in the pages read (1–{made.read_to}) '
                f'of "{book.title}".',
                file=sys.stderr,
            )
            return 1
        entries = [found]
    if args.json:
        data = made.to_json()
        data["entries"] = [e.to_json() for e in entries]
        ctx.print_json(data)
        return 0
    if not entries:
        say(f'Nobody named yet in pages 1–{made.read_to} of "{book.title}". Read on and ask again.')
        return 0
    say(f'X-Ray of "{book.title}", pages 1–{made.read_to} ({len(entries)} entries)')
    for entry in entries[: args.limit] if not args.name else entries:
        aka = f" (also {', '.join(entry.aliases[:4])})" if entry.aliases else ""
        say(
            f"\n{entry.name}{aka} — {entry.kind}, {entry.uses} mentions, first on p. {entry.first_page}"
        )
        if entry.note:
            say(f"  {entry.note}")
        for page, sentence in entry.description:
            say(f"  p. {page}: {sentence}")
        if args.name:
            say("  Pages: " + ", ".join(str(p) for p, _, _ in entry.mentions))
    return 0


def _xray_edit(args: argparse.Namespace) -> list[str]:
    """The reader's change asked for (``--merge A B`` …), as ``xray.edit`` takes it."""
    for what in ("merge", "split", "rename", "hide", "unhide"):
        value = getattr(args, what, None)
        if value:
            return [what, *([value] if isinstance(value, str) else value)]
    return []


def cmd_recap(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.companions import recap

    book = ctx.library.find_book(args.book)
    if args.trace:
        return show_trace(args, ctx, book.id, book.title, "recap")
    failed = model_job(args, ctx, book.id, recap=True, notes=False)
    if failed is not None:
        return failed
    db = ctx.library.db
    made = recap.recap(db, book.id, only=args.chapter)
    if args.json:
        ctx.print_json(made.to_json())
        return 0
    if not made.chapters:
        if args.chapter:
            say(
                f"margin: chapter {args.chapter} is not within the pages read "
                f'(1–{made.read_to}) of "{book.title}".',
                file=sys.stderr,
            )
            return 1
        say(f'Nothing to recap yet in pages 1–{made.read_to} of "{book.title}".')
        return 0
    say(f'The story so far: "{book.title}", pages 1–{made.read_to}')
    for c in made.chapters:
        head = f"\n{c.chapter.index}. {c.chapter.title} (pp. {c.chapter.first}–{c.chapter.last})"
        if c.state == "current":
            say(
                f"{head}\n  You are here: read to page {c.read_to} of this chapter's "
                f"{c.chapter.first}–{c.chapter.last}; it is summarised when you finish it."
            )
            continue
        say(head)
        if c.text:
            say(f"  {c.text}")
        else:
            for page, sentence in c.sentences:
                say(f"  p. {page}: {sentence}")
    return 0


def cmd_cards(args: argparse.Namespace, ctx: CliContext) -> int:
    from pathlib import Path

    from core.companions import anki, cards

    book = ctx.library.find_book(args.book)
    if args.trace:
        return show_trace(args, ctx, book.id, book.title, "quiz")
    args.model = args.quiz
    failed = model_job(args, ctx, book.id, recap=False, notes=False, quiz=True)
    if failed is not None:
        return failed
    made = cards.cards(ctx.library, book.id)
    if args.anki:
        target = Path(args.anki)
        if target.suffix.lower() != ".apkg":
            target = target.with_name(target.name + ".apkg")
        count = anki.write_apkg(target, book.title, book.sha256, made)
        say(f'{count} cards of "{book.title}" written to {target} (import it in Anki).')
        return 0
    if args.json:
        ctx.print_json([c.to_json() for c in made])
        return 0
    if not made:
        say(
            f'"{book.title}" has no cards yet: highlight passages or write notes, '
            "and each becomes a card with its quote and page."
        )
        return 0
    for c in made:
        say(f"[{c.source}, p. {c.page}] {c.front[:200]}")
    return 0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "xray",
        help="the people, places and things of a book met so far, with their pages",
    )
    p.add_argument("book", metavar="BOOK", help="book number or the start of its title")
    p.add_argument("--name", metavar="NAME", help="only this entry, with every page it is on")
    p.add_argument("--limit", type=number, default=20, help="entries to list (default 20)")
    p.add_argument("--json", action="store_true")
    edits = p.add_mutually_exclusive_group()
    edits.add_argument("--merge", nargs=2, metavar=("NAME", "INTO"), help="one person: kept")
    edits.add_argument(
        "--split", nargs=2, metavar=("ENTRY", "ALIAS"), help="make ALIAS an entry of its own"
    )
    edits.add_argument("--rename", nargs=2, metavar=("ENTRY", "NEW"), help="call it NEW")
    edits.add_argument("--hide", metavar="NAME", help="leave this entry out")
    edits.add_argument("--unhide", metavar="NAME", help="show a hidden entry again")
    _model_flags(p)
    p.set_defaults(handler=cmd_xray)

    p = sub.add_parser(
        "recap",
        help="the story so far: a summary of each chapter read, up to where you are",
    )
    p.add_argument("book", metavar="BOOK", help="book number or the start of its title")
    p.add_argument("--chapter", type=number, metavar="N", help="only chapter N")
    p.add_argument("--json", action="store_true")
    _model_flags(p)
    p.set_defaults(handler=cmd_recap)

    p = sub.add_parser(
        "cards",
        help="flashcards from a book's highlights and notes; --anki FILE.apkg for Anki",
    )
    p.add_argument("book", metavar="BOOK", help="book number or the start of its title")
    p.add_argument("--anki", metavar="FILE", help="write an Anki package (.apkg)")
    p.add_argument(
        "--quiz",
        action="store_true",
        help="add quiz questions on the chapters read, written by the connected model",
    )
    p.add_argument("--yes", action="store_true", help="with --quiz: do not ask before")
    p.add_argument("--json", action="store_true")
    _trace_flags(p, "quiz")
    p.set_defaults(handler=cmd_cards)


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        action="store_true",
        help="write notes or summaries with the connected model (says the cost first)",
    )
    p.add_argument("--yes", action="store_true", help="with --model: do not ask before")
    _trace_flags(p, "model")


def _trace_flags(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--trace",
        action="store_true",
        help=f"list each {what} call made for this book (tokens, stop reason, time, "
        "sentences withheld) instead",
    )
    p.add_argument(
        "--last", type=number, default=0, metavar="N", help="with --trace: only the last N jobs"
    )
