"""CLI commands for the library: import, list, show, search, read pages, position, delete."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from core.cli.context import CliContext, clean, number, say
from core.errors import BookError, MarginError
from core.store.library import BookInfo, HighlightRecord, NoteRecord


def _book_json(book: BookInfo) -> dict[str, Any]:
    data = dataclasses.asdict(book)
    data["progress"] = round(book.progress, 4)
    return data


def _progress_printer(name: str) -> Any:
    if not sys.stderr.isatty():
        return lambda fraction, message: None
    width = 30

    def show(fraction: float, message: str) -> None:
        filled = int(fraction * width)
        sys.stderr.write(
            f"\r{clean(name)[:30]:30} [{'#' * filled}{'.' * (width - filled)}] {message[:30]:30}"
        )
        sys.stderr.flush()
        if fraction >= 1.0:
            sys.stderr.write("\r" + " " * 100 + "\r")

    return show


def _import_one(ctx: CliContext, path: Path, password: str | None) -> Any:
    """Import ``path``; a protected PDF uses ``--password``, or asks for it once on a
    terminal (typed without echo). The password is used in memory, never stored."""
    from core.books.importer import import_book
    from core.errors import BookCode

    try:
        return import_book(
            ctx.library, path, progress=_progress_printer(path.name), password=password
        )
    except MarginError as exc:
        if exc.code != BookCode.PASSWORD or password or not sys.stdin.isatty():
            raise
    import getpass

    typed = getpass.getpass(f"Password for {clean(path.name)}: ")
    if not typed:
        raise MarginError("password", f"{path.name} was not imported: no password was given.")
    return import_book(ctx.library, path, progress=_progress_printer(path.name), password=typed)


def cmd_import(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.books.importer import recover_incomplete

    recover_incomplete(ctx.library)  # copies left by imports that were killed

    failed = 0
    results: list[dict[str, Any]] = []
    for name in args.files:
        path = Path(name)
        try:
            result = _import_one(ctx, path, args.password)
        except MarginError as exc:
            failed += 1
            say(f"margin: {exc}", file=sys.stderr)
            results.append({"file": name, "error": exc.message, "code": exc.code})
            continue
        book = result.book
        if not result.already_present:  # the spoiler check's counts, now, not at the first question
            from core.agent.spoilers import prepare_book

            prepare_book(ctx.library.db, book.id)
        if args.json:
            results.append(
                {
                    "file": name,
                    "already_present": result.already_present,
                    "book": _book_json(book),
                    "repaired": result.problems,
                }
            )
        elif result.already_present:
            say(f"{book.id}\t{book.title}\t(already in the library)")
        else:
            say(f"{book.id}\t{book.title}\t{book.page_count} pages")
            if result.problems:
                say(f"margin: {path.name}: repaired: {result.problems}", file=sys.stderr)
    if args.json:
        ctx.print_json(results)
    return 1 if failed else 0


def cmd_books(args: argparse.Namespace, ctx: CliContext) -> int:
    books = ctx.library.list_books()
    if args.json:
        ctx.print_json([_book_json(b) for b in books])
        return 0
    _mention_unlisted(ctx)
    if not books:
        say("Your library is empty. Add a book with: margin import FILE")
        return 0
    for b in books:
        done = "finished" if b.finished else f"{b.progress:4.0%}"
        author = f" — {b.author}" if b.author else ""
        say(f"{b.id:>4}  {b.title}{author}  [{b.format}, {b.page_count} pages, {done}]")
    return 0


def _mention_unlisted(ctx: CliContext) -> None:
    unlisted = ctx.app.unlisted_copies()
    if unlisted:
        say(
            f"margin: {len(unlisted)} book {'copy is' if len(unlisted) == 1 else 'copies are'} "
            f"in {ctx.paths.books} but not in the library (was the database lost?). "
            "Add them back with: margin recover-library",
            file=sys.stderr,
        )


def cmd_recover_library(args: argparse.Namespace, ctx: CliContext) -> int:
    def show(done: int, total: int, path: Path) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rRe-importing {done + 1} of {total}…")
            sys.stderr.flush()

    recovered = ctx.app.recover_library(progress=show)
    if sys.stderr.isatty() and recovered:
        sys.stderr.write("\r" + " " * 40 + "\r")
    if not recovered:
        say(f"Every book copy in {ctx.paths.books} is in the library; nothing to recover.")
        return 0
    failed = 0
    for item in recovered:
        if item.result is not None:
            book = item.result.book
            say(f"{book.id}\t{book.title}\t{book.page_count} pages (recovered)")
        else:
            failed += 1
            say(f"margin: {item.path.name}: {item.error} (the copy is kept)", file=sys.stderr)
    return 1 if failed else 0


def cmd_show(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    toc = ctx.library.toc(book.id)
    if args.json:
        data = _book_json(book)
        data["toc"] = [dataclasses.asdict(t) for t in toc]
        ctx.print_json(data)
        return 0
    say(f"{book.title}")
    if book.author:
        say(f"by {book.author}")
    say(
        f"Book {book.id} · {book.format.upper()} · {book.page_count} pages · on page {book.page}"
        + f" · read to page {book.read_to}"
        + (" · finished" if book.finished else "")
    )
    say(f"File: {book.original_path}")
    if book.outdated:
        say(
            "Note: an older version of Margin read this book; its contents pages may be "
            f"wrong. Run 'margin reimport {book.id}' to read it again."
        )
    if toc:
        say("\nContents")
        for t in toc:
            say(f"{'  ' * (t.level - 1)}{t.title} {'.' * 3} p. {t.page}")
    return 0


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
    hits = ctx.app.search.search_book(
        book.id, args.query, limit=args.limit, until_page=args.until_page
    )
    if args.json:
        ctx.print_json([dataclasses.asdict(h) for h in hits])
        return 0
    if not hits:
        say(f'No passages in "{book.title}" match "{args.query}".')
        return 0
    for h in hits:
        snippet = " ".join(h.snippet.split())
        say(f"{h.pages:>12}  {snippet}")
    return 0


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
    if not grouped:
        where = "" if args.beyond_read else " (up to where you have read each book)"
        say(f'No passages in your library match "{query}"{where}.')
        return 0
    for book_id, hits in grouped:
        book = titles.get(book_id)
        say(f"{book.title if book else f'book {book_id}'}  [{book_id}]")
        for h in hits:
            say(f"{h.pages:>12}  {' '.join(h.snippet.split())}")
        say("")
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


def _page_arg(book: BookInfo, number: int) -> int:
    if number < 1 or number > book.page_count:
        raise BookError(
            "bad_page",
            f'"{book.title}" has pages 1 to {book.page_count}; there is no page {number}.',
        )
    return number


def _where(book: BookInfo) -> str:
    limit = "the whole book (finished)" if book.finished else f"page {book.read_to}"
    return (
        f"{book.title}: now on page {book.page} of {book.page_count}; "
        f"read up to {limit}, the assistant's limit"
    )


def cmd_position(args: argparse.Namespace, ctx: CliContext) -> int:
    """``position`` sets the page and how far the reader has read; ``read-to`` only the
    latter (lower as well as higher)."""
    from core.reading import ReadingSession

    book = ctx.library.find_book(args.book)
    session = ReadingSession.of(book)
    if args.number is not None:
        page = _page_arg(book, args.number)
        if not args.only_bound:
            session.jump(page)
        session.set_bound(page)
        book = session.save(ctx.library)
    say(_where(book))
    if session.looking_ahead:
        say(session.bound_note() + f" (margin read-to {book.id} {book.page} moves it here).")
    return 0


def cmd_reimport(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.books.importer import reimport_book

    book = ctx.library.find_book(args.book)
    password = args.password
    if password is None and book.format == "pdf" and sys.stdin.isatty():
        from core.books.pdf_doc import is_encrypted

        if book.file_path and is_encrypted(Path(book.file_path)):
            import getpass

            password = getpass.getpass(f"Password for {clean(book.title)}: ") or None
    updated = reimport_book(
        ctx.library, book.id, progress=_progress_printer(book.title), password=password
    )
    say(
        f"{updated.id}\t{updated.title}\t{updated.page_count} pages (was {book.page_count}); "
        "notes, highlights and conversations kept"
    )
    from core.cli.threads import say_lost

    say_lost(ctx, updated.id)
    return 0


def cmd_finished(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    book = ctx.library.set_finished(book.id, not args.no)
    state = (
        "finished: the assistant may now read the whole book"
        if book.finished
        else "not finished: the assistant stays before your page"
    )
    say(f"{book.title}: {state}.")
    return 0


def cmd_delete(args: argparse.Namespace, ctx: CliContext) -> int:
    book = ctx.library.find_book(args.book)
    if not args.yes:
        if not sys.stdin.isatty():
            raise BookError("not_confirmed", f'Not deleting "{book.title}": add --yes to confirm.')
        answer = input(
            clean(f'Delete "{book.title}" with its highlights, notes and conversations? [y/N] ')
        )
        if answer.strip().lower() not in ("y", "yes"):
            say("Nothing deleted.")
            return 0
    ctx.library.delete_book(book.id)
    say(f'Deleted "{book.title}".')
    return 0


def cmd_highlights(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.export import highlights_to_markdown

    book = ctx.library.find_book(args.book)
    highlights = ctx.library.list_highlights(book.id)
    if args.w3c or args.json:
        from core.export_annotations import annotation_collection, highlight_json

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


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the library commands to the parser."""
    p = sub.add_parser("import", help="add book files to the library")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--password",
        help="the password of protected PDFs (asked for on a terminal when it is left out)",
    )
    p.set_defaults(handler=cmd_import)

    p = sub.add_parser("books", help="list the books in the library")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_books)

    p = sub.add_parser(
        "recover-library",
        help="add back every book copy in the library folder that the database does not list",
    )
    p.set_defaults(handler=cmd_recover_library)

    p = sub.add_parser("show", help="a book's details and table of contents")
    p.add_argument("book", metavar="BOOK", help="book number or the start of its title")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_show)

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
        help="with --all: also passages after where you have read each book",
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

    p = sub.add_parser(
        "position", help="show, or set, the page you are on and have read up to (both)"
    )
    p.add_argument("book", metavar="BOOK")
    p.add_argument("number", type=number, nargs="?", metavar="N")
    p.set_defaults(handler=cmd_position, only_bound=False)

    p = sub.add_parser(
        "read-to",
        help="show, or set, only how far you have read (the assistant's limit; lower or higher)",
    )
    p.add_argument("book", metavar="BOOK")
    p.add_argument("number", type=number, nargs="?", metavar="N")
    p.set_defaults(handler=cmd_position, only_bound=True)

    p = sub.add_parser(
        "reimport", help="read a book again from its copy (fixes contents pages of older imports)"
    )
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--password", help="the password of a protected PDF (asked on a terminal)")
    p.set_defaults(handler=cmd_reimport)

    p = sub.add_parser("finished", help="mark a book finished (lifts the spoiler limit)")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--no", action="store_true", help="mark it not finished again")
    p.set_defaults(handler=cmd_finished)

    p = sub.add_parser("delete", help="remove a book and everything about it")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=cmd_delete)

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
