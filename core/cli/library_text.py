"""CLI commands for a book's text and what the reader made of it: search, print a page,
highlights and notes (registered by ``library``)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from core.cli.context import CliContext, number, say
from core.errors import BookError
from core.labels import cited_pages

if TYPE_CHECKING:  # (``margin import`` loads no peewee)
    from core.store.library import HighlightRecord, NoteRecord


def cmd_search(args: argparse.Namespace, ctx: CliContext) -> int:
    if args.all:
        return _search_all(args, ctx)
    if args.query is None:
        raise BookError(
            "no_query",
            "Say which book and what to look for: margin search BOOK QUERY.",
            hint='To search every book, use: margin search --all "QUERY".',
        )
    book = ctx.library.find_book(args.book)
    if args.until_page is not None and args.until_page < 1:
        raise BookError("bad_page", "--until-page must be 1 or more.")
    _ensure_vectors(ctx, book.id)
    # where the reader has read to: passages after it are folded (issue 46 item 4), as
    # ``search --all`` does, unless --beyond-read or --until-page says otherwise
    bound = None if args.beyond_read else book.spoiler_bound
    until = args.until_page if args.until_page is not None else bound
    hits = ctx.app.search.search_book(book.id, args.query, limit=args.limit, until_page=until)
    later = 0
    if args.until_page is None and bound is not None:
        later = _later_passages(ctx, book.id, args.query, bound)
    if args.json:
        ctx.print_json([dataclasses.asdict(h) for h in hits])
        return 0
    if not hits:
        where = " up to where you have read" if later else ""
        say(f'No passages in "{book.title}" match "{args.query}"{where}.')
    labels = ctx.library.page_labels(book.id)
    for h in hits:
        snippet = " ".join(h.snippet.split())
        say(f"{cited_pages(h.start_page, h.end_page, labels):>12}  {snippet}")
    if later:
        more = "1 more passage" if later == 1 else f"{later} more passages"
        say(f"{more} after where you have read (p. {bound}); add --beyond-read to see them.")
    return 0


def _later_passages(ctx: CliContext, book_id: int, query: str, bound: int) -> int:
    """How many passages after ``bound`` match ``query`` (a count, never their text)."""
    hits = ctx.app.search.search_book(book_id, query, limit=100, hybrid=False)
    return sum(1 for h in hits if h.start_page > bound)


def _ensure_vectors(ctx: CliContext, book_id: int) -> None:
    """A command ends before background work would: a book without vectors (just imported,
    or from before them) gets them now, once, so the search is by meaning too."""
    from core.search.vectors import VectorsUnavailable

    if ctx.app.library.read_only:
        return  # nothing can be saved: searched by words alone
    vectors = ctx.app.search.vectors
    if not vectors.has(book_id):
        try:
            vectors.index_book(book_id)
        except VectorsUnavailable:
            pass  # searched by words alone; the log says why


def _search_all(args: argparse.Namespace, ctx: CliContext) -> int:
    """``margin search --all QUERY``: passages from every book, grouped by book."""
    if args.until_page is not None:
        raise BookError(
            "bad_option",
            "--until-page is for one book; with --all each book stops where you have read it.",
            hint="Add --beyond-read to search whole books.",
        )
    query = " ".join(q for q in (args.book, args.query) if q)
    grouped = ctx.app.search.search_all(
        query, per_book=min(args.limit, 20), bounded=not args.beyond_read
    )
    titles = {b.id: b for b in ctx.library.list_books()}
    if args.json:
        ctx.print_json(
            [
                {
                    "book_id": book_id,
                    "title": titles[book_id].title if book_id in titles else "",
                    "passages": [dataclasses.asdict(h) for h in hits],
                }
                for book_id, hits in grouped
            ]
        )
        return 0
    left = 0 if args.beyond_read else ctx.app.search.left_out(query, {b for b, _ in grouped})
    more = (
        f"{left} book{'s' if left != 1 else ''} you have not read that far also "
        f"match{'es' if left == 1 else ''} (--beyond-read includes them)."
    )
    if not grouped:
        where = "" if args.beyond_read else " (up to where you have read each book)"
        say(f'No passages in your library match "{query}"{where}.')
        if left:
            say(more)
        return 0
    for book_id, hits in grouped:
        book = titles.get(book_id)
        say(f"{book.title if book else f'book {book_id}'}  [{book_id}]")
        labels = ctx.library.page_labels(book_id)
        for h in hits:
            say(
                f"{cited_pages(h.start_page, h.end_page, labels):>12}  {' '.join(h.snippet.split())}"
            )
        say("")
    if left:
        say(more)
    return 0


def cmd_page(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    page = ctx.library.page(book.id, args.number)
    if args.json:
        ctx.print_json(
            {"book_id": book.id, "number": page.number, "label": page.label, "text": page.text}
        )
        return 0
    say(
        f"— {book.title}, page {page.number}"
        + (f" ({page.label})" if page.label != str(page.number) else "")
        + " —\n"
    )
    say(page.text)
    return 0


def cmd_highlights(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.export.markdown import highlights_to_markdown

    book = ctx.library.find_book(args.book)
    highlights = ctx.library.list_highlights(book.id)
    if args.w3c or args.json:
        from core.export.annotations import annotation_collection, highlight_json

        data = annotation_collection(ctx.app, book.id) if args.w3c else None
        labels = [] if args.w3c else ctx.library.page_labels(book.id)
        ctx.print_json(data if args.w3c else [highlight_json(h, labels) for h in highlights])
        return 0
    if args.markdown:
        notes = ctx.library.list_notes(book.id)
        labels = ctx.library.page_labels(book.id)
        say(highlights_to_markdown(book, highlights, notes, labels), end="")
        return 0
    return ctx.print_list(
        highlights,
        _highlight_line,
        as_json=args.json,
        empty=f'No highlights in "{book.title}" yet.',
    )


def _highlight_line(h: HighlightRecord) -> str:
    note = f"  — {h.note}" if h.note else ""
    lost = (
        "  (its words were not found when the book was read again)"
        if h.quote and h.quote.lost
        else ""
    )
    return f"p. {h.page:<5} [{h.colour}] {h.text}{note}{lost}"


def cmd_notes(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    if args.add:
        note = ctx.library.add_note(book.id, args.add, page=args.page)
        say(f"Saved note {note.id}.")
        return 0
    return ctx.print_list(
        ctx.library.list_notes(book.id),
        _note_line,
        as_json=args.json,
        empty=f'No notes for "{book.title}" yet.',
    )


def _note_line(n: NoteRecord) -> str:
    where = f"p. {n.page}" if n.page else "book"
    who = "assistant" if n.source == "agent" else "you"
    return f"{n.id:>4}  {where:<8} ({who}) {n.text}"


def register_reading(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``search`` and ``page``."""
    p = sub.add_parser(
        "search",
        help="search a book's text (BOOK QUERY), or every book's (--all QUERY)",
    )
    p.add_argument("book", metavar="BOOK", help="the book (with --all: the query)")
    p.add_argument("query", nargs="?")
    p.add_argument("--all", action="store_true", help="search every book, results by book")
    p.add_argument(
        "--beyond-read",
        action="store_true",
        help="also passages after where you have read (each book, with --all)",
    )
    p.add_argument("--limit", type=number, default=10, help="passages (per book with --all)")
    p.add_argument(
        "--until-page", type=number, default=None, metavar="P", help="only passages up to page P"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("page", help="print one page of a book")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("number", type=number, metavar="N")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_page)


def register_marks(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``highlights`` and ``notes``."""
    p = sub.add_parser("highlights", help="list a book's highlights")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="print them as Markdown")
    p.add_argument("--w3c", action="store_true", help="W3C Web Annotations (JSON-LD), threads too")
    p.set_defaults(handler=cmd_highlights)

    p = sub.add_parser("notes", help="list (or add) notes about a book")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--add", metavar="TEXT", help="add a note")
    p.add_argument("--page", type=number, default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_notes)
