"""The tools the agent uses to read the book, all scoped to the conversation's book.

The reading-position bound is enforced here, in code: with spoiler-safe mode on, no search
hit and no page after the reader's page ever reaches the model; the tool says that more
exists later instead. Book text is untrusted: it goes back inside ``search_result`` blocks or
``<book_text>`` delimiters, and anything in it that looks like those delimiters is defused.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import MarginError
from core.search import count_beyond, search_book
from core.store.library import BookInfo, Library

READ_PAGES_MAX = 5
READ_CHARS_MAX = 12_000
SOURCE_PREFIX = "margin://book/"
_SOURCE = re.compile(r"^margin://book/(\d+)/pages/(\d+)-(\d+)$")
_DELIMITER = re.compile(r"<(/?)(book_text|book_passage|search_result)", re.I)


def defuse(text: str) -> str:
    """Book text cannot close or open the delimiters that mark it as book text."""
    return _DELIMITER.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def source_for(book_id: int, first: int, last: int) -> str:
    return f"{SOURCE_PREFIX}{book_id}/pages/{first}-{last}"


def parse_source(source: str) -> tuple[int, int, int] | None:
    match = _SOURCE.match(source)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def pages_label(first: int, last: int) -> str:
    return f"p. {first}" if first == last else f"pp. {first}–{last}"


@dataclass(frozen=True)
class ToolContext:
    library: Library
    book: BookInfo
    bound: int | None  # last page the agent may read; None = whole book
    citations: bool  # answer with search_result blocks (Claude) or labelled text


@dataclass(frozen=True)
class ToolOutput:
    content: str | list[dict[str, Any]]
    summary: str
    pages: tuple[int, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    describe: Callable[[dict[str, Any]], str]
    read_only: bool = True

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


class ToolError(Exception):
    """A tool failed in a way the model should hear about (and may correct)."""


class ToolRegistry:
    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self) -> list[dict[str, Any]]:
        """Tool definitions in a stable order, the last one marked for prompt caching."""
        defs = [t.definition() for t in self._tools.values()]
        if defs:
            defs[-1] = {**defs[-1], "cache_control": {"type": "ephemeral"}}
        return defs

    async def call(self, ctx: ToolContext, name: str, arguments: dict[str, Any]) -> ToolOutput:
        tool = self._tools.get(name)
        if tool is None:
            return ToolOutput(
                f"There is no tool called '{name}'. Available tools: {', '.join(self._tools)}.",
                "unknown tool",
                is_error=True,
            )
        try:
            return await tool.handler(ctx, arguments)
        except ToolError as exc:
            return ToolOutput(str(exc), str(exc)[:80], is_error=True)
        except MarginError as exc:
            return ToolOutput(exc.message, exc.message[:80], is_error=True)


def _int(arguments: dict[str, Any], key: str, default: int | None = None) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or value is None:
        raise ToolError(f"'{key}' must be a whole number.")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ToolError(f"'{key}' must be a whole number, not {value!r}.") from None


def _bound_note(ctx: ToolContext) -> str:
    return (
        f"The reader is on page {ctx.bound}; pages after it are hidden to avoid spoilers."
        if ctx.bound is not None
        else ""
    )


async def _search(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    query = str(arguments.get("query", "")).strip()
    if not query:
        raise ToolError("'query' must be some words to search for.")
    top_k = max(1, min(_int(arguments, "top_k", 5), 10))
    hits = search_book(ctx.book.id, query, limit=top_k, until_page=ctx.bound)
    beyond = count_beyond(ctx.book.id, query, ctx.bound) if ctx.bound is not None else 0
    note = ""
    if beyond:
        note = (
            f"{beyond} more matching passage{'s' if beyond != 1 else ''} exist{'s' if beyond == 1 else ''} after page {ctx.bound}, "
            "beyond where the reader is. Do not guess what they say."
        )
    pages = tuple(sorted({p for h in hits for p in range(h.start_page, h.end_page + 1)}))
    detail = {
        "query": query,
        "passages": [
            {"first_page": h.start_page, "last_page": h.end_page, "snippet": h.snippet}
            for h in hits
        ],
        "beyond": beyond,
    }
    summary = f"{len(hits)} passage{'s' if len(hits) != 1 else ''}" + (
        f" ({beyond} more later in the book)" if beyond else ""
    )
    if not hits:
        text = f"No passage{' before page ' + str(ctx.bound) if ctx.bound else ''} matches '{query}'. Try other words."
        return ToolOutput(text + (" " + note if note else ""), summary, (), detail)
    if ctx.citations:
        blocks: list[dict[str, Any]] = [
            {
                "type": "search_result",
                "source": source_for(ctx.book.id, h.start_page, h.end_page),
                "title": f"{ctx.book.title}, {pages_label(h.start_page, h.end_page)}",
                "content": [{"type": "text", "text": h.text}],
                "citations": {"enabled": True},
            }
            for h in hits
        ]
        if note:
            blocks.append({"type": "text", "text": note})
        return ToolOutput(blocks, summary, pages, detail)
    parts = [
        f'<book_text pages="{h.start_page}-{h.end_page}" label="[{pages_label(h.start_page, h.end_page)}]">\n{defuse(h.text)}\n</book_text>'
        for h in hits
    ]
    text = (
        "\n\n".join(parts)
        + "\n\nCite passages with their label, for example [p. 12]."
        + (f"\n{note}" if note else "")
    )
    return ToolOutput(text, summary, pages, detail)


async def _read_pages(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
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
    clipped = ""
    if ctx.bound is not None and end > ctx.bound:
        end = ctx.bound
        clipped = f" Pages after {ctx.bound} are beyond where the reader is and were not read."
    pages = ctx.library.pages(ctx.book.id, start, end)
    numbers = tuple(p.number for p in pages)
    summary = f"pages {start}–{end}" if end != start else f"page {start}"
    if ctx.citations:
        blocks: list[dict[str, Any]] = [
            {
                "type": "search_result",
                "source": source_for(ctx.book.id, p.number, p.number),
                "title": f"{ctx.book.title}, p. {p.number}"
                + (f" (printed page {p.label})" if p.label and p.label != str(p.number) else ""),
                "content": [
                    {
                        "type": "text",
                        "text": p.text[: READ_CHARS_MAX // max(1, len(pages))]
                        or "(this page has no text)",
                    }
                ],
                "citations": {"enabled": True},
            }
            for p in pages
        ]
        if clipped:
            blocks.append({"type": "text", "text": clipped.strip()})
        return ToolOutput(blocks, summary, numbers, {"start": start, "end": end})
    body = "\n\n".join(
        f'<book_text pages="{p.number}-{p.number}" label="[p. {p.number}]">\n{defuse(p.text[: READ_CHARS_MAX // max(1, len(pages))])}\n</book_text>'
        for p in pages
    )
    return ToolOutput(body + clipped, summary, numbers, {"start": start, "end": end})


async def _toc(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    entries = ctx.library.toc(ctx.book.id)
    visible = [t for t in entries if ctx.bound is None or t.page <= ctx.bound]
    hidden = len(entries) - len(visible)
    lines = [f"{'  ' * (t.level - 1)}- {defuse(t.title)} (p. {t.page})" for t in visible]
    head = f"'{ctx.book.title}' has {ctx.book.page_count} pages."
    if not entries:
        head += " It has no table of contents."
    if hidden:
        lines.append(
            f"({hidden} more entr{'ies' if hidden != 1 else 'y'} after page {ctx.bound}, beyond where the reader is, not shown.)"
        )
    return ToolOutput(
        '<book_text kind="table of contents">\n'
        + head
        + "\n"
        + "\n".join(lines)
        + "\n</book_text>",
        f"{len(visible)} entries",
        (),
        {"entries": len(visible), "hidden": hidden},
    )


async def _save_note(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
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
    note = ctx.library.add_note(ctx.book.id, text, page=page_no, source="agent")
    return ToolOutput(
        f"Saved note {note.id}.",
        "note saved",
        (page_no,) if page_no else (),
        {"note_id": note.id},
        False,
    )


async def _list_notes(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    notes = ctx.library.list_notes(ctx.book.id)
    if ctx.bound is not None:
        notes = [n for n in notes if n.page is None or n.page <= ctx.bound]
    if not notes:
        return ToolOutput("There are no notes about this book yet.", "no notes")
    lines = [
        f"- ({'yours' if n.source == 'agent' else 'reader'}{', p. ' + str(n.page) if n.page else ''}) {defuse(n.text)}"
        for n in notes
    ]
    return ToolOutput(
        '<book_text kind="notes">\n' + "\n".join(lines) + "\n</book_text>", f"{len(notes)} notes"
    )


def _quote(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def default_tools() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool(
                "search_book",
                "Search the book's full text. Returns the best-matching passages with their pages. "
                "Use distinctive words (names, places, key terms); run several searches with different words when needed.",
                {
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": 'Words or a "quoted phrase" to look for.',
                        },
                        "top_k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
                    },
                    "required": ["query"],
                },
                _search,
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
                _read_pages,
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
                _toc,
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
                _save_note,
                lambda a: "Saving a note",
                read_only=False,
            ),
            Tool(
                "list_notes",
                "List the notes saved about this book in earlier conversations.",
                {"type": "object", "properties": {}},
                _list_notes,
                lambda a: "Looking at saved notes",
            ),
        ]
    )
