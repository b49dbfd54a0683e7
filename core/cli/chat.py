"""CLI commands for talking about a book: ask, chat, conversations, history, rename, forget,
and the API key (``margin key``)."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import signal
import sys
from pathlib import Path
from typing import Any

from core.cli.context import CliContext, clean, number, say
from core.errors import MarginError


def _service(ctx: CliContext) -> Any:
    service = ctx.app.agent
    service.recover_interrupted()
    return service


async def _stream(
    service: Any, conversation_id: int, text: str, args: argparse.Namespace, *, out_json: bool
) -> int:
    import asyncio  # only the commands that answer load it

    from core.agent.answer import AnswerState, fill_hidden, notice_text
    from core.agent.events import (
        Citation,
        Notice,
        RunCancelled,
        RunFailed,
        RunFinished,
        RunStarted,
        SpoilerHidden,
        TextDelta,
        ToolFinished,
        ToolStarted,
    )
    from core.agent.grounding import NOT_CHECKED_CLI, checked_against_book
    from core.agent.types import Selection, Withheld
    from core.cli.ask_output import AnswerPrinter
    from core.labels import pages_label

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.set)
    except (NotImplementedError, RuntimeError):
        pass
    selection = None
    if getattr(args, "selection", None):
        if not args.selection_page:
            raise MarginError(
                "missing_page", "--selection needs --selection-page N (the page the passage is on)."
            )
        selection = Selection(args.selection, args.selection_page)
    verbose = getattr(args, "verbose", False)
    reveal = getattr(args, "reveal", False)
    code = 0
    answer = AnswerState()

    def render(raw: str) -> str:
        def notice(item: Withheld) -> str:
            return f"[{notice_text(item)} — add --reveal to show it.] "

        return clean(fill_hidden(raw, answer.withheld, reveal=reveal, notice=notice))

    printer = AnswerPrinter(render)
    try:
        async for event in service.ask(
            conversation_id,
            text,
            selection=selection,
            strategy=getattr(args, "strategy", None),
            stop=stop,
            spoilers_until=getattr(args, "spoilers_until", None),
        ):
            answer.apply(event)
            if isinstance(event, RunStarted) and (
                skipped := service.spoiler_check_skipped(event.provider)
            ):
                say(f"margin: {skipped}", file=sys.stderr)
            if isinstance(event, SpoilerHidden | TextDelta) and not out_json:
                sys.stdout.write(printer.feed(answer.text))
                sys.stdout.flush()
            elif isinstance(event, ToolStarted) and verbose:
                say(f"· {event.description}…", file=sys.stderr)
            elif isinstance(event, ToolFinished) and verbose:
                say(
                    f"  {event.name}: {event.summary} ({event.duration_ms:.0f} ms)", file=sys.stderr
                )
            elif isinstance(event, Notice):
                say(f"margin: {event.text}", file=sys.stderr)
            elif isinstance(event, Citation) and verbose:
                say(
                    f"  cites {pages_label(event.citation.first_page, event.citation.last_page)}",
                    file=sys.stderr,
                )
            elif isinstance(event, RunFinished | RunCancelled | RunFailed):
                result = event.result
                checked = checked_against_book(result.tool_calls, result.passages)
                if out_json:
                    data = dataclasses.asdict(result)
                    data["answer_shown"] = fill_hidden(
                        result.answer, result.withheld, reveal=reveal
                    )
                    data["withheld"] = withheld_json(result.withheld, reveal=reveal)
                    data.update(_marks(result.stop_reason, checked))
                    CliContext.print_json(data)
                else:
                    sys.stdout.write(printer.finish(answer.text))
                    if answer.text and not answer.text.endswith("\n"):
                        sys.stdout.write("\n")
                    if result.answer and not checked and isinstance(event, RunFinished):
                        say(
                            f"\n[{NOT_CHECKED_CLI} To answer from the book, ask with --strategy always-retrieve.]"
                        )
                    if answer.citations:
                        pages = ", ".join(c.label for c in answer.citations)
                        say(f"\nSources: {pages}")
                if isinstance(event, RunCancelled):
                    say("margin: stopped; the partial answer is saved.", file=sys.stderr)
                    code = 130
                elif isinstance(event, RunFailed):
                    say(
                        f"margin: {event.error.message} {event.error.hint}".rstrip(),
                        file=sys.stderr,
                    )
                    code = 1
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
    return code


def _marks(stop_reason: str, checked: bool) -> dict[str, bool]:
    """The fields ``ask --json`` and ``history --json`` add to an answer."""
    from core.agent.repetition import STOP_REASON as REPETITION_STOP

    return {
        "checked_against_book": checked,  # false: the model never saw the book's text
        "stopped_repeating": stop_reason == REPETITION_STOP,  # the answer looped and was cut
        "empty_answer": stop_reason == "empty_answer",  # no words: the passages were added
    }


def cmd_ask(args: argparse.Namespace, ctx: CliContext) -> int:
    service = _service(ctx)
    book = ctx.library.find_book(args.book)
    if args.selection_page is not None and args.selection_page > book.page_count:
        raise MarginError(
            "bad_page",
            clean(
                f'"{book.title}" has pages 1 to {book.page_count}; --selection-page '
                f"{args.selection_page} is not one of them."
            ),
        )
    if args.conversation is not None:
        conversation = service.get_conversation(args.conversation)
        if conversation.book_id != book.id:
            raise MarginError(
                "wrong_book", f"Conversation {conversation.id} is about another book."
            )
    elif args.selection and args.selection_page:  # a passage: its thread (core.store.anchors)
        conversation = ctx.app.conversations.thread_for(
            book.id, args.selection, args.selection_page
        )
    else:
        existing = [] if args.new else service.list_conversations(book.id)
        conversation = existing[0] if existing else service.create_conversation(book.id)
    if not args.json:
        mode = service.mode()
        if mode == "passages":
            say(
                "(No model connected: showing passages from the book. Set a key with 'margin key set'.)",
                file=sys.stderr,
            )
    import asyncio

    return asyncio.run(_stream(service, conversation.id, args.question, args, out_json=args.json))


def cmd_chat(args: argparse.Namespace, ctx: CliContext) -> int:
    service = _service(ctx)
    book = ctx.library.find_book(args.book)
    conversation = (
        service.get_conversation(args.conversation)
        if args.conversation
        else service.create_conversation(book.id)
    )
    say(
        f'Talking about "{book.title}" (conversation {conversation.id}). Empty line or Ctrl+D to quit.',
        file=sys.stderr,
    )
    import asyncio

    while True:
        try:
            question = input("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            say(file=sys.stderr)
            return 0
        if not question:
            return 0
        args.selection = None
        asyncio.run(_stream(service, conversation.id, question, args, out_json=False))
        say()


def cmd_conversations(args: argparse.Namespace, ctx: CliContext) -> int:
    service = _service(ctx)
    book = ctx.library.find_book(args.book)
    items = service.list_conversations(book.id)
    if args.json:
        ctx.print_json([dataclasses.asdict(c) for c in items])
        return 0
    if not items:
        say(
            f'No conversations about "{book.title}" yet. Ask with: margin ask {book.id} "your question"'
        )
    for c in items:
        usage, cost = service.conversation_usage(c.id)
        money = f", ~${cost:.4f}" if cost else ""
        say(
            f"{c.id:>4}  {c.title}  ({c.message_count} messages, {usage.total} tokens{money}, {c.updated_at:%Y-%m-%d %H:%M})"
        )
    return 0


def withheld_json(items: Any, *, reveal: bool) -> list[dict[str, Any]]:
    """Held-back sentences for JSON output: without ``--reveal`` only that they are there
    (where, why, against which page), never their text or the words that gave them away."""
    if reveal:
        return [dataclasses.asdict(w) for w in items]
    return [{"index": w.index, "read_to": w.read_to, "reason": w.reason} for w in items]


def cmd_history(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.agent.answer import fill_hidden
    from core.agent.grounding import NOT_CHECKED, checked_against_book
    from core.export.markdown import answer_passages, answer_sources
    from core.labels import pages_label

    service = _service(ctx)
    records = service.history(args.conversation)
    if args.json:
        rows = []
        book_id = service.conversations.get(args.conversation).book_id
        labels = service.library.page_labels(book_id)  # printed pages ("p. 40 in print")
        for r in records:
            data = dataclasses.asdict(r)
            if r.role == "assistant":
                data["sources"] = answer_sources(r, labels)  # the pages it cited, with quotes
                data["passages_used"] = answer_passages(r, labels)  # what the tools returned
                data["text_shown"] = fill_hidden(r.text, r.withheld, reveal=args.reveal)
            if "withheld" in data:
                data["withheld"] = withheld_json(r.withheld, reveal=args.reveal)
                data.update(_marks(r.stop_reason, checked_against_book(r.tool_calls, r.passages)))
            rows.append(data)
        ctx.print_json(rows)
        return 0
    for r in records:
        if r.role == "user":
            sel = (
                f"  [selection p. {r.selection_page}: {r.selection_text[:60]}…]"
                if r.selection_text
                else ""
            )
            say(f"\n> {r.text}{sel}")
        else:
            mark = "" if r.status == "complete" else f"  ({r.status})"
            text = fill_hidden(r.text, r.withheld, reveal=args.reveal)
            say(f"\n{text}{mark}")
            if r.text and not checked_against_book(r.tool_calls, r.passages):
                say(f"[{NOT_CHECKED}]")
            if r.error:
                say(f"[{r.error.message}]")
            if r.citations:
                say(
                    "Sources: "
                    + ", ".join(pages_label(c.first_page, c.last_page) for c in r.citations)
                )
    return 0


def cmd_export_conversation(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.export.markdown import book_conversations_markdown, conversation_markdown

    if (args.conversation is None) == (args.book is None):
        raise MarginError(
            "export_what",
            "Give either a conversation number or --book BOOK (not both).",
            hint="List a book's conversations with 'margin conversations BOOK'.",
        )
    if args.book is not None:
        text = book_conversations_markdown(ctx.app, ctx.library.find_book(args.book).id)
    else:
        text = conversation_markdown(ctx.app, args.conversation)
    if args.out is None:
        say(text, end="")  # the same sanitiser as every other command's output
        return 0
    from core.export.markdown import write_text_atomic

    path = write_text_atomic(args.out, text)  # a MarginError in words when it cannot
    say(f"Saved {path}.", file=sys.stderr)
    return 0


def cmd_rename(args: argparse.Namespace, ctx: CliContext) -> int:
    conv = _service(ctx).rename_conversation(args.conversation, args.title)
    say(f'Conversation {conv.id} is now "{conv.title}".')
    return 0


def cmd_forget(args: argparse.Namespace, ctx: CliContext) -> int:
    service = _service(ctx)
    conv = service.get_conversation(args.conversation)
    service.delete_conversation(conv.id)
    say(f'Forgot conversation {conv.id} ("{conv.title}").')
    return 0


def cmd_key(args: argparse.Namespace, ctx: CliContext) -> int:
    from core.api_key import delete_api_key, get_api_key, key_storage_available, set_api_key

    if args.action == "set":
        key = (
            sys.stdin.readline().strip()
            if not sys.stdin.isatty()
            else getpass.getpass("Anthropic API key: ")
        )
        where = set_api_key(key)
        if where == "keyring":
            say("Saved the key in the system keyring.")
            return 0
        if os.environ.get("ANTHROPIC_API_KEY", "").strip():
            say(
                "No system keyring is available, so the key was not saved; "
                "Margin uses ANTHROPIC_API_KEY from the environment.",
                file=sys.stderr,
            )
            return 0
        say(
            "margin: No system keyring is available, so the key was NOT saved (a command "
            "ends with its session). Set ANTHROPIC_API_KEY in your environment instead, "
            "or install a keyring service (e.g. gnome-keyring or KWallet).",
            file=sys.stderr,
        )
        return 1
    if args.action == "delete":
        delete_api_key()
        say("Removed the key from the keyring.")
        return 0
    key = get_api_key()
    storage = "available" if key_storage_available() else "not available (keys last one session)"
    say(f"API key: {'set' if key else 'not set'}; system keyring {storage}.")
    return 0


END = 10**9  # "--spoilers-until end": past any book's last page


def _spoiler_page(value: str) -> int:
    if value.strip().lower() == "end":
        return END
    try:
        page = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a page number or 'end'") from None
    if not 1 <= page <= END:
        raise argparse.ArgumentTypeError("the page must be 1 or more")
    return page


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the conversation commands to the parser."""
    p = sub.add_parser("ask", help="ask a question about a book (streams the answer)")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("question")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--conversation", type=number, metavar="ID", help="continue this conversation"
    )
    group.add_argument("--new", action="store_true", help="start a new conversation")
    p.add_argument("--selection", metavar="TEXT", help="a passage the question is about")
    p.add_argument("--selection-page", type=number, metavar="N")
    p.add_argument("--strategy", choices=["auto", "tool-use", "always-retrieve", "llm-only"])
    p.add_argument(
        "--spoilers-until",
        type=_spoiler_page,
        metavar="PAGE|end",
        help="for this question only, you do not mind spoilers up to PAGE (or the end)",
    )
    p.add_argument(
        "--reveal", action="store_true", help="show sentences the spoiler check held back"
    )
    p.add_argument("--json", action="store_true", help="print the whole result as JSON at the end")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="show what the assistant is doing on stderr"
    )
    p.set_defaults(handler=cmd_ask)

    p = sub.add_parser("chat", help="talk about a book interactively")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--conversation", type=number, metavar="ID")
    p.add_argument("--strategy", choices=["auto", "tool-use", "always-retrieve", "llm-only"])
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(handler=cmd_chat)

    p = sub.add_parser("conversations", help="list a book's conversations")
    p.add_argument("book", metavar="BOOK")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_conversations)

    p = sub.add_parser("history", help="print a conversation")
    p.add_argument("conversation", type=number, metavar="CONVERSATION")
    p.add_argument(
        "--reveal", action="store_true", help="show sentences the spoiler check held back"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_history)

    p = sub.add_parser(
        "export-conversation",
        help="a conversation (or all of a book's) as Markdown, with the passages it cited",
    )
    p.add_argument("conversation", type=int, metavar="ID", nargs="?")
    p.add_argument("--book", metavar="BOOK", help="every conversation about this book")
    p.add_argument("--out", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler=cmd_export_conversation)

    p = sub.add_parser("rename", help="rename a conversation")
    p.add_argument("conversation", type=number, metavar="CONVERSATION")
    p.add_argument("title")
    p.set_defaults(handler=cmd_rename)

    p = sub.add_parser("forget", help="delete a conversation")
    p.add_argument("conversation", type=number, metavar="CONVERSATION")
    p.set_defaults(handler=cmd_forget)

    p = sub.add_parser(
        "key", help="set, check or delete the Anthropic API key (kept in the system keyring)"
    )
    p.add_argument("action", choices=["set", "status", "delete"], nargs="?", default="status")
    p.set_defaults(handler=cmd_key)
