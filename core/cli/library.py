"""CLI commands for the library: import, list, show, position, delete (search, pages,
highlights and notes: ``library_text``)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from core.cli.context import CliContext, clean, number, say
from core.errors import BookError, MarginError
from core.store.book_info import BookInfo


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


def _import_one(ctx: CliContext, path: Path, password: str | None, alone: bool) -> Any:
    """Import ``path``; a protected PDF uses ``--password``, or asks for it once on a
    terminal (typed without echo). The password is used in memory, never stored. ``alone``:
    the only book of this command (a big EPUB is then parsed without a second process)."""
    from core.books.importer import import_book
    from core.books.limits import DEFAULT_LIMITS
    from core.errors import BookCode

    limits = dataclasses.replace(DEFAULT_LIMITS, epub_worker=False) if alone else DEFAULT_LIMITS

    try:
        return import_book(  # the process ends soon after: no memory handed back
            ctx.importing(),
            path,
            progress=_progress_printer(path.name),
            password=password,
            limits=limits,
            trim_memory=False,
        )
    except MarginError as exc:
        if exc.code != BookCode.PASSWORD or password or not sys.stdin.isatty():
            raise
    import getpass

    typed = getpass.getpass(f"Password for {clean(path.name)}: ")
    if not typed:
        raise MarginError("password", f"{path.name} was not imported: no password was given.")
    return import_book(
        ctx.importing(),
        path,
        progress=_progress_printer(path.name),
        password=typed,
        limits=limits,
        trim_memory=False,
    )


def cmd_import(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.books.importer import recover_incomplete

    recover_incomplete(ctx.importing())  # copies left by imports that were killed

    failed = 0
    results: list[dict[str, Any]] = []
    for name in args.files:
        path = Path(name)
        try:
            result = _import_one(ctx, path, args.password, len(args.files) == 1)
        except MarginError as exc:
            failed += 1
            say(f"margin: {exc}", file=sys.stderr)
            results.append({"file": name, "error": exc.message, "code": exc.code})
            continue
        # the spoiler check's counts are not made here (a third of a book's import, issue
        # 41): the window makes them once the book is opened, a question asked first makes
        # them itself, and both keep them
        book = result.book
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
    session = ReadingSession.open(ctx.library, book)
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


def register_import(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``import`` (alone: ``margin import`` builds only its own parser)."""
    p = sub.add_parser("import", help="add book files to the library")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--password",
        help="the password of protected PDFs (asked for on a terminal when it is left out)",
    )
    p.set_defaults(handler=cmd_import)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the library commands to the parser."""
    from core.cli import library_text

    register_import(sub)

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

    library_text.register_reading(sub)

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

    library_text.register_marks(sub)
