"""The tools the agent uses to read the book, all scoped to the conversation's book.

The reading bound (``read_to``) is enforced here, in code: with spoiler-safe mode on, no
search hit and no page after it ever reaches the model; the tool says only that the book
goes on. Tools return typed parts (``Passage``, ``BookText``, ``Note``); how they are shown
to a model (search-result blocks with citations, or delimited text with page labels) is the
provider adapter's business.

Handlers are plain functions doing database work; ``ToolBox.call`` runs them on the
database threads, so the window's thread never runs SQL for the agent and read-only tools
really run side by side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from core.agent.types import BookText, HiddenAfter, Note, Passage, ResultPart, ToolSpec
from core.errors import MarginError
from core.labels import cited_pages, printed_pages
from core.prompts import load_prompt
from core.search import BookSearch
from core.store.library import BookInfo, Library

READ_PAGES_MAX = 5
READ_CHARS_MAX = 12_000


@dataclass(frozen=True)
class ToolContext:
    library: Library
    search: BookSearch
    book: BookInfo
    bound: int | None  # last page the agent may read (read_to); None = whole book


@dataclass(frozen=True)
class ToolOutput:
    parts: tuple[ResultPart, ...]
    summary: str  # for people: "5 passages", "pages 40–42"
    pages: tuple[int, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)
    is_error: bool = False

    @property
    def passages(self) -> tuple[Passage, ...]:
        return tuple(p for p in self.parts if isinstance(p, Passage))


def error_output(text: str, summary: str = "") -> ToolOutput:
    return ToolOutput((Note(text),), summary or text[:80], is_error=True)


Handler = Callable[[ToolContext, Mapping[str, Any]], ToolOutput]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    describe: Callable[[Mapping[str, Any]], str]
    read_only: bool = True

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.input_schema)


class ToolError(Exception):
    """A tool failed in a way the model should hear about (and may correct)."""


class ToolBox:
    """The tools offered to the model, and the threads their database work runs on."""

    def __init__(self, tools: list[Tool] | None = None, executor: Executor | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self.executor = executor
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def is_read_only(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is None or tool.read_only

    def describe(self, name: str, arguments: Mapping[str, Any]) -> str:
        tool = self._tools.get(name)
        return tool.describe(arguments) if tool else f"Calling unknown tool '{name}'"

    def run(self, ctx: ToolContext, name: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run a tool here, in this thread."""
        tool = self._tools.get(name)
        if tool is None:
            return error_output(
                f"There is no tool called '{name}'. Available tools: {', '.join(self._tools)}.",
                "unknown tool",
            )
        try:
            return tool.handler(ctx, arguments)
        except ToolError as exc:
            return error_output(str(exc))
        except MarginError as exc:
            return error_output(exc.message)

    async def call(self, ctx: ToolContext, name: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run a tool on a database thread and await it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self.run, ctx, name, arguments)


def _int(arguments: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or value is None:
        raise ToolError(f"'{key}' must be a whole number.")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ToolError(f"'{key}' must be a whole number, not {value!r}.") from None
    if abs(number) > 10**9:
        raise ToolError(f"'{key}' is far outside the book.")
    return number


def _beyond_note(ctx: ToolContext) -> HiddenAfter | None:
    """Only that the book goes on — never how much matches: a count tied to the query
    would answer yes/no questions about what happens later."""
    if ctx.bound is None or not ctx.search.continues_beyond(ctx.book.id, ctx.bound):
        return None
    return HiddenAfter(ctx.bound)


def _chapters(ctx: ToolContext) -> list[tuple[int, str]]:
    """(first page, title) of the book's top-level contents entries, in page order."""
    try:
        toc = ctx.library.toc(ctx.book.id)
    except MarginError:
        return []
    top = min((t.level for t in toc), default=0)
    return sorted((t.page, " ".join(t.title.split())) for t in toc if t.level == top and t.page)


def _chapter_of(chapters: list[tuple[int, str]], page: int) -> str:
    """ " — Chapter title" for a passage starting on ``page`` (the passage's title names it:
    passages mode shows it beside the page)."""
    title = ""
    for first, name in chapters:
        if first > page:
            break
        title = name
    return f" — {title}" if title else ""


def search_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
    query = str(arguments.get("query", "")).strip()
    if not query:
        raise ToolError("'query' must be some words to search for.")
    top_k = max(1, min(_int(arguments, "top_k", 5), 10))
    # deep: the sentence encoder's ranking joins the words' (the answers' search)
    hits = ctx.search.search_book(ctx.book.id, query, limit=top_k, until_page=ctx.bound, deep=True)
    beyond = _beyond_note(ctx)
    chapters = _chapters(ctx) if hits else []
    labels = ctx.library.page_labels(ctx.book.id) if hits else []  # printed pages (page-list)
    passages = tuple(
        Passage(
            ctx.book.id,
            h.start_page,
            h.end_page,
            h.text,
            f"{ctx.book.title}, {cited_pages(h.start_page, h.end_page, labels)}"
            + _chapter_of(chapters, h.start_page),
            printed=printed_pages(h.start_page, h.end_page, labels),
        )
        for h in hits
    )
    pages = tuple(sorted({p for h in hits for p in range(h.start_page, h.end_page + 1)}))
    detail = {
        "query": query,
        "passages": [
            {"first_page": h.start_page, "last_page": h.end_page, "snippet": h.snippet}
            for h in hits
        ],
    }
    summary = f"{len(hits)} passage{'s' if len(hits) != 1 else ''}"
    if not hits:
        where = f" before page {ctx.bound}" if ctx.bound else ""
        parts: tuple[ResultPart, ...] = (
            Note(f"No passage{where} matches '{query}'. Try other words."),
        )
        return ToolOutput(parts + ((beyond,) if beyond else ()), summary, (), detail)
    return ToolOutput(passages + ((beyond,) if beyond else ()), summary, pages, detail)


def read_pages_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
    start = _int(arguments, "start")
    end = _int(arguments, "end", start)
    count = ctx.book.page_count
    if start < 1 or start > count:
        raise ToolError(f"The book has pages 1 to {count}; there is no page {start}.")
    if end < start:
        raise ToolError("'end' must be the same as or after 'start'.")
    if ctx.bound is not None and start > ctx.bound:
        raise ToolError(
            f"Page {start} is beyond where the reader is (page {ctx.bound}); you may read pages 1 to {ctx.bound} only."
        )
    end = min(end, count, start + READ_PAGES_MAX - 1)
    clipped: tuple[ResultPart, ...] = ()
    if ctx.bound is not None and end > ctx.bound:
        end = ctx.bound
        clipped = (
            Note(f"Pages after {ctx.bound} are beyond where the reader is and were not read."),
        )
    pages = ctx.library.pages(ctx.book.id, start, end)
    share = READ_CHARS_MAX // max(1, len(pages))
    passages = tuple(
        Passage(
            ctx.book.id,
            p.number,
            p.number,
            p.text[:share] or "(this page has no text)",
            f"{ctx.book.title}, {cited_pages(p.number, p.number, {p.number: p.label})}",
            printed=printed_pages(p.number, p.number, {p.number: p.label}),
        )
        for p in pages
    )
    summary = f"pages {start}–{end}" if end != start else f"page {start}"
    return ToolOutput(
        passages + clipped,
        summary,
        tuple(p.number for p in pages),
        {"start": start, "end": end},
    )


def contents_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
    entries = ctx.library.toc(ctx.book.id)
    visible = [t for t in entries if ctx.bound is None or t.page <= ctx.bound]
    hidden = len(entries) - len(visible)
    lines = [f"{'  ' * (t.level - 1)}- {t.title} (p. {t.page})" for t in visible]
    head = f"'{ctx.book.title}' has {ctx.book.page_count} pages."
    if not entries:
        head += " It has no table of contents."
    if hidden:
        lines.append(
            f"({hidden} more entr{'ies' if hidden != 1 else 'y'} after page {ctx.bound}, beyond where the reader is, not shown.)"
        )
    return ToolOutput(
        (BookText("table of contents", head + "\n" + "\n".join(lines)),),
        f"{len(visible)} entries",
        (),
        {"entries": len(visible), "hidden": hidden},
    )


def save_note_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
    text = str(arguments.get("text", "")).strip()
    if not text:
        raise ToolError("'text' must be the note to save.")
    if len(text) > 2000:
        raise ToolError("A note can be at most 2,000 characters.")
    page = arguments.get("page")
    page_no = _int(arguments, "page") if page is not None else None
    if page_no is not None and not 1 <= page_no <= ctx.book.page_count:
        raise ToolError(
            f"The book has pages 1 to {ctx.book.page_count}; there is no page {page_no}."
        )
    if page_no is None and ctx.bound is not None:
        page_no = ctx.bound  # saved while bounded: it can only be about pages up to here
    note = ctx.library.add_note(ctx.book.id, text, page=page_no, source="agent")
    return ToolOutput(
        (Note(f"Saved note {note.id}."),),
        "note saved",
        (page_no,) if page_no else (),
        {"note_id": note.id},
    )


def list_notes_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
    notes = ctx.library.list_notes(ctx.book.id)
    if ctx.bound is not None:
        # a note without a page may be about any part of the book: beyond the bound it
        # could spoil, so it is shown only when the whole book is open to the agent
        notes = [n for n in notes if n.page is not None and n.page <= ctx.bound]
    if not notes:
        return ToolOutput((Note("There are no notes about this book yet."),), "no notes")
    lines = [
        f"- ({'yours' if n.source == 'agent' else 'reader'}{', p. ' + str(n.page) if n.page else ''}) {n.text}"
        for n in notes
    ]
    return ToolOutput((BookText("notes", "\n".join(lines)),), f"{len(notes)} notes")


def _quote(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def default_tools(executor: Executor | None = None) -> ToolBox:
    return ToolBox(
        [
            Tool(
                "search_book",
                load_prompt("tool_search_book").strip(),
                {
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": 'Words, a question or a description in your own words, or a "quoted phrase".',
                        },
                        "top_k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
                    },
                    "required": ["query"],
                },
                search_tool,
                lambda a: f"Searching the book for '{_quote(a.get('query', ''))}'",
            ),
            Tool(
                "read_pages",
                f"Read whole pages of the book (at most {READ_PAGES_MAX} pages at a time). Pages are numbered from 1.",
                {
                    "type": "object",
                    "properties": {
                        "start": {"type": "integer", "minimum": 1},
                        "end": {"type": "integer", "minimum": 1},
                    },
                    "required": ["start"],
                },
                read_pages_tool,
                lambda a: (
                    f"Reading page {a.get('start')}"
                    if a.get("end") in (None, a.get("start"))
                    else f"Reading pages {a.get('start')}–{a.get('end')}"
                ),
            ),
            Tool(
                "table_of_contents",
                "The book's table of contents with the page where each part starts.",
                {"type": "object", "properties": {}},
                contents_tool,
                lambda a: "Looking at the table of contents",
            ),
            Tool(
                "save_note",
                "Save a short note about this book for later conversations (your memory of the book). Use it sparingly, "
                "for facts worth remembering, never for the reader's private information.",
                {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "page": {"type": "integer", "minimum": 1},
                    },
                    "required": ["text"],
                },
                save_note_tool,
                lambda a: "Saving a note",
                read_only=False,
            ),
            Tool(
                "list_notes",
                "List the notes saved about this book in earlier conversations.",
                {"type": "object", "properties": {}},
                list_notes_tool,
                lambda a: "Looking at saved notes",
            ),
        ],
        executor,
    )
