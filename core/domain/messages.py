"""The records of a conversation: typed, frozen, and free of any provider's wire format.

A conversation is a list of ``UserMessage`` and ``AssistantMessage``. A user message holds a
``Question`` (with the reader's selection), or the ``ToolResult``\\ s of the previous turn, or
``Passages`` and an ``Instruction`` added by a strategy. An assistant message holds
``TextPart``\\ s (with their ``CitationRef``\\ s) and ``ToolCall``\\ s. Tools return typed
``Passage``\\ s; only a provider adapter (``core/agent/providers/anthropic/wire.py``) renders
these to a model's API and parses its replies back. A run also leaves its ``Usage``, its
``ToolCallRecord``\\ s and, when it failed, an ``ErrorInfo``.

The store persists these (``core.store.conversations``) and the agent works in them
(``core.agent.types`` adds the turn types), so they live below both. ``part_to_json``/
``part_from_json`` are the storage codec (our own schema, versioned by the store's
migrations), so history replays exactly without keeping any API's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.labels import pages_label


@dataclass(frozen=True)
class Passage:
    """Book text with the pages it spans. ``text`` is what the model reads; ``quote`` is a
    short exact excerpt of it (no added ellipses) that the reader can find on the page."""

    book_id: int
    first_page: int
    last_page: int
    text: str
    title: str = ""  # "Alice's Adventures in Wonderland, p. 3"
    quote: str = ""
    printed: str = ""  # "p. 40 in print": the paper book's pages (an EPUB's page-list)

    @property
    def label(self) -> str:
        return pages_label(self.first_page, self.last_page)


@dataclass(frozen=True)
class CitationRef:
    """Pages an answer cites (1-based, inclusive) with the quoted words. Once stored,
    ``exact`` is the book's own words for the quote and ``start`` where they begin in the
    first page's stored text (-1: not found there), so the reader marks exactly them."""

    book_id: int
    first_page: int
    last_page: int
    quoted_text: str
    exact: str = ""
    start: int = -1

    @property
    def label(self) -> str:
        return pages_label(self.first_page, self.last_page)


# -- message parts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """A passage the reader selected, handed to the question."""

    text: str
    page: int


@dataclass(frozen=True)
class Question:
    """What the reader asked. ``prompt`` is what the model is sent when it differs from what
    the reader sees (a quick action's template); empty means ``text`` itself."""

    text: str
    selection: Selection | None = None
    prompt: str = ""

    @property
    def for_model(self) -> str:
        return self.prompt or self.text


@dataclass(frozen=True)
class Instruction:
    """Text from Margin (not the reader, not the book) added to a user turn."""

    text: str


@dataclass(frozen=True)
class Passages:
    """Passages a strategy put straight into the question (always-retrieve)."""

    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class BookText:
    """Untrusted text from the book or the reader's notes that cannot be cited by page (the
    contents, the notes list)."""

    kind: str  # "table of contents" | "notes"
    text: str


@dataclass(frozen=True)
class Note:
    """Margin's own words to the model inside a tool result ("Try other words")."""

    text: str


@dataclass(frozen=True)
class HiddenAfter:
    """The book goes on after ``page``, past the reader's bound (never how much matches)."""

    page: int


ResultPart = Passage | BookText | Note | HiddenAfter


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    parts: tuple[ResultPart, ...] = ()
    is_error: bool = False

    @property
    def passages(self) -> tuple[Passage, ...]:
        return tuple(p for p in self.parts if isinstance(p, Passage))

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.parts if isinstance(p, Note))


@dataclass(frozen=True)
class TextPart:
    text: str
    citations: tuple[CitationRef, ...] = ()


@dataclass(frozen=True)
class Withheld:
    """A sentence of an answer the spoiler check held back (``core.agent.spoilers``): its
    full text, the words that made it a spoiler with the pages where the book first has
    them, and the bound it was checked against. Never sent to a model; shown on request."""

    index: int
    text: str
    terms: tuple[tuple[str, int], ...]  # (word as written, first page in the book)
    read_to: int
    # "later": names what comes later; "unsupported": not from the pages read; "ungrounded": no
    # passage the model was given says it (core.agent.loop_text)
    reason: str = "later"

    @property
    def first_page(self) -> int:
        return min((page for _, page in self.terms), default=self.read_to + 1)


UserPart = Question | ToolResult | Passages | Instruction
AssistantPart = TextPart | ToolCall | Withheld


@dataclass(frozen=True)
class UserMessage:
    parts: tuple[UserPart, ...]

    @property
    def results(self) -> tuple[ToolResult, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolResult))

    @property
    def question(self) -> Question | None:
        return next((p for p in self.parts if isinstance(p, Question)), None)


@dataclass(frozen=True)
class AssistantMessage:
    parts: tuple[AssistantPart, ...]

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


Message = UserMessage | AssistantMessage


# -- a run's records -----------------------------------------------------------------------


MAX_TOKENS = 10**12  # more than any model's context; far inside SQLite's 64-bit integers


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        # Counts come from a server: one that reports 2**66 or -5 tokens must neither lose
        # the answer (SQLite holds 64-bit integers) nor make the cost negative.
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            value = getattr(self, name)
            try:
                count = int(value)
            except (TypeError, ValueError, OverflowError):
                count = 0
            object.__setattr__(self, name, max(0, min(count, MAX_TOKENS)))

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


@dataclass(frozen=True)
class ToolCallRecord:
    """A tool call of a run as stored and shown (what ran, for how long, its summary)."""

    tool_use_id: str
    name: str
    arguments: dict[str, Any]
    summary: str
    is_error: bool
    duration_ms: float
    step: int


@dataclass(frozen=True)
class ErrorInfo:
    """An error as shown to people: ``code`` from ``core.errors.LLMCode`` (or a BookError
    code), a sentence, what to do, and seconds to wait when the server said so."""

    code: str
    message: str
    hint: str = ""
    retry_after: float | None = None


# -- storage codec ----------------------------------------------------------------------------


def _passage_json(p: Passage) -> dict[str, Any]:
    return {
        "kind": "passage",
        "book_id": p.book_id,
        "first_page": p.first_page,
        "last_page": p.last_page,
        "text": p.text,
        "title": p.title,
        "quote": p.quote,
    } | ({"printed": p.printed} if p.printed else {})


def _citation_json(c: CitationRef) -> dict[str, Any]:
    return {
        "book_id": c.book_id,
        "first_page": c.first_page,
        "last_page": c.last_page,
        "quoted_text": c.quoted_text,
    } | ({"exact": c.exact, "start": c.start} if c.exact else {})


def citation_to_json(c: CitationRef) -> dict[str, Any]:
    return _citation_json(c)


def citation_from_json(raw: Mapping[str, Any]) -> CitationRef:
    return CitationRef(
        int(raw["book_id"]),
        int(raw["first_page"]),
        int(raw["last_page"]),
        str(raw.get("quoted_text", "")),
        str(raw.get("exact", "")),
        int(raw.get("start", -1)),
    )


def part_to_json(part: Any) -> dict[str, Any]:
    match part:
        case Passage():
            return _passage_json(part)
        case BookText(kind, text):
            return {"kind": "book_text", "book_kind": kind, "text": text}
        case Note(text):
            return {"kind": "note", "text": text}
        case HiddenAfter(page):
            return {"kind": "hidden_after", "page": page}
        case Question(text, selection, prompt):
            data: dict[str, Any] = {"kind": "question", "text": text}
            if selection is not None:
                data["selection"] = {"text": selection.text, "page": selection.page}
            if prompt:
                data["prompt"] = prompt
            return data
        case Instruction(text):
            return {"kind": "instruction", "text": text}
        case Passages(passages):
            return {"kind": "passages", "passages": [_passage_json(p) for p in passages]}
        case ToolResult(call_id, parts, is_error):
            return {
                "kind": "tool_result",
                "call_id": call_id,
                "is_error": is_error,
                "parts": [part_to_json(p) for p in parts],
            }
        case TextPart(text, citations):
            out: dict[str, Any] = {"kind": "text", "text": text}
            if citations:
                out["citations"] = [_citation_json(c) for c in citations]
            return out
        case ToolCall(call_id, name, arguments):
            return {"kind": "tool_call", "id": call_id, "name": name, "arguments": dict(arguments)}
        case Withheld(index, text, terms, read_to, reason):
            return {
                "kind": "withheld",
                "index": index,
                "text": text,
                "terms": [list(t) for t in terms],
                "read_to": read_to,
                "reason": reason,
            }
    raise TypeError(f"not a message part: {part!r}")


def part_from_json(raw: Mapping[str, Any]) -> Any:
    kind = raw.get("kind")
    if kind == "passage":
        return Passage(
            int(raw["book_id"]),
            int(raw["first_page"]),
            int(raw["last_page"]),
            str(raw.get("text", "")),
            str(raw.get("title", "")),
            str(raw.get("quote", "")),
            str(raw.get("printed", "")),
        )
    if kind == "book_text":
        return BookText(str(raw.get("book_kind", "")), str(raw.get("text", "")))
    if kind == "note":
        return Note(str(raw.get("text", "")))
    if kind == "hidden_after":
        return HiddenAfter(int(raw.get("page", 0)))
    if kind == "question":
        sel = raw.get("selection")
        selection = (
            Selection(str(sel.get("text", "")), int(sel.get("page", 1)))
            if isinstance(sel, Mapping)
            else None
        )
        return Question(str(raw.get("text", "")), selection, str(raw.get("prompt", "")))
    if kind == "instruction":
        return Instruction(str(raw.get("text", "")))
    if kind == "passages":
        return Passages(tuple(part_from_json(p) for p in raw.get("passages", [])))
    if kind == "tool_result":
        return ToolResult(
            str(raw.get("call_id", "")),
            tuple(part_from_json(p) for p in raw.get("parts", [])),
            bool(raw.get("is_error", False)),
        )
    if kind == "text":
        return TextPart(
            str(raw.get("text", "")),
            tuple(citation_from_json(c) for c in raw.get("citations", [])),
        )
    if kind == "tool_call":
        args = raw.get("arguments")
        return ToolCall(
            str(raw.get("id", "")), str(raw.get("name", "")), dict(args) if args else {}
        )
    if kind == "withheld":
        return Withheld(
            int(raw.get("index", 0)),
            str(raw.get("text", "")),
            tuple((str(t[0]), int(t[1])) for t in raw.get("terms", []) if len(t) == 2),
            int(raw.get("read_to", 0)),
            str(raw.get("reason", "later")),
        )
    raise ValueError(f"unknown stored message part: {kind!r}")


def parts_to_json(parts: tuple[Any, ...] | list[Any]) -> list[dict[str, Any]]:
    return [part_to_json(p) for p in parts]


def parts_from_json(raw: Any) -> tuple[Any, ...]:
    return tuple(part_from_json(p) for p in raw or [] if isinstance(p, Mapping))
