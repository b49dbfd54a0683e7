"""The prompt for one turn: the system prompt from ``prompts/`` and the conversation history.

History is the whole conversation within a message cap and a token budget; the oldest turns
go first, the history never starts with an orphan tool result, every tool call keeps its
result, old tool results are shortened, and the system prompt stays byte-stable so prompt
caching works.

The bound holds for history too: when the reader lowers ``read_to`` (or un-marks a finished
book), passages, listings and answers from earlier turns that drew on pages beyond the new
bound are replaced by a line saying they were withheld, so nothing from there reaches the
model again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from core.agent.types import (
    AssistantMessage,
    AssistantPart,
    BookText,
    Message,
    Note,
    Passage,
    Passages,
    ResultPart,
    Selection,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    UserPart,
    part_to_json,
)
from core.prompts import load_prompt
from core.settings import AgentLimits
from core.store.conversations import StoredMessage
from core.store.library import BookInfo

OLD_RESULT_CHARS = 400
WITHHELD_ANSWER = (
    "(An earlier answer is withheld here: it drew on pages beyond where the reader has now read.)"
)
WITHHELD_PASSAGE = "(Withheld: this passage is beyond where the reader has now read.)"
_PAGE_LABEL = re.compile(r"\[(?:p|pp)\.\s*(\d+)(?:\s*[–-]\s*(\d+))?\]")

__all__ = [
    "BookContext",
    "ContextStrategy",
    "Selection",
    "citable",
    "estimate_tokens",
    "label_pages",
    "without_no_model_replies",
]


def label_pages(text: str) -> list[tuple[int, int]]:
    """Page labels a model wrote (``[p. 12]``, ``[pp. 12–13]``), in order."""
    out = []
    for match in _PAGE_LABEL.finditer(text):
        first = int(match.group(1))
        out.append((first, int(match.group(2) or first)))
    return out


def citable(first: int, last: int, page_count: int, bound: int | None) -> bool:
    """Whether a page range may become a citation (a chip): inside the book and, with the
    spoiler bound on, not past the last page read. A range that is not is refused whole,
    never clamped."""
    if first < 1 or last < first or last > page_count:
        return False
    return bound is None or last <= bound


def estimate_tokens(messages: Iterable[Message]) -> int:
    """A cheap, conservative token estimate (about 3.5 characters a token)."""
    size = sum(
        len(json.dumps([part_to_json(p) for p in m.parts], ensure_ascii=False)) for m in messages
    )
    return int(size / 3.5) + 4


class ContextStrategy(Protocol):
    def system(
        self, book: BookInfo, *, bound: int | None, selection: Selection | None, citations: bool
    ) -> str: ...

    def history(
        self,
        stored: list[StoredMessage],
        limits: AgentLimits,
        *,
        bound: int | None = None,
        shrink: bool = False,
    ) -> list[Message]: ...


class BookContext:
    """The default context strategy."""

    def system(
        self, book: BookInfo, *, bound: int | None, selection: Selection | None, citations: bool
    ) -> str:
        load_prompt(
            "conversation_system_prompt"
        )  # the main template first: its absence is the error to report
        if bound is None:
            position = (
                load_prompt("position_finished")
                if book.finished
                else load_prompt("position_unbounded", read_to=str(book.read_to))
            )
        else:
            position = load_prompt("position_bounded", read_to=str(bound)) + load_prompt(
                "spoiler_rule", read_to=str(bound)
            )
        citation_rule = load_prompt("citations_native" if citations else "citations_labels")
        selection_block = (
            load_prompt("selection_context", page=str(selection.page))
            if selection is not None
            else ""
        )
        return load_prompt(
            "conversation_system_prompt",
            book_title=book.title,
            book_author=f" by {book.author}" if book.author else "",
            page_count=str(book.page_count),
            position_rule=position.strip(),
            citation_rule=citation_rule.strip(),
            selection_block=selection_block.strip(),
        )

    def history(
        self,
        stored: list[StoredMessage],
        limits: AgentLimits,
        *,
        bound: int | None = None,
        shrink: bool = False,
    ) -> list[Message]:
        usable = [
            s
            for s in stored
            if not (
                isinstance(s.message, AssistantMessage)
                and s.status in ("failed", "interrupted", "running")
            )
        ]
        beyond = _runs_beyond(usable, bound)
        last_question = max(
            (i for i, s in enumerate(usable) if s.kind == "question"), default=len(usable)
        )
        messages: list[Message] = []
        for i, s in enumerate(usable):
            message = _replayable(
                s.message, old=i < last_question, bound=bound, withheld=s.run_id in beyond
            )
            if message is None:
                continue
            if messages and type(messages[-1]) is type(message):
                messages[-1] = _merge(messages[-1], message)
            else:
                messages.append(message)
        messages = _pair_tools(messages)
        cap = limits.max_history_messages // (2 if shrink else 1)
        budget = limits.history_token_budget // (2 if shrink else 1)
        if len(messages) > cap:
            messages = messages[-cap:]
        while len(messages) > 1 and estimate_tokens(messages) > budget:
            messages = _clean_start(messages[1:])
        return _clean_start(messages)


def earlier_turns(
    stored: list[StoredMessage],
    runs: dict[int, tuple[str, str, str]],
    run_id: int,
    provider: str,
) -> list[StoredMessage]:
    """The history of a question asked now (run ``run_id``, answered by ``provider``): the
    stored turns of the other runs; for a model, a no-model reply is not its own words."""
    earlier = [s for s in stored if s.run_id != run_id]
    if provider == "passages":
        return earlier
    passages_runs = {r for r, (kind, _, _) in runs.items() if kind == "passages"}
    return without_no_model_replies(earlier, passages_runs)


def without_no_model_replies(
    stored: list[StoredMessage], passages_runs: set[int]
) -> list[StoredMessage]:
    """The history a model gets: a reply made with no model connected (passages mode) is
    never given to it as its own words. Its tool turns go, and its answer becomes a labelled
    note saying what the reader was shown."""
    out: list[StoredMessage] = []
    for s in stored:
        if s.run_id is None or s.run_id not in passages_runs:
            out.append(s)
        elif s.kind == "answer":
            note = TextPart(load_prompt("no_model_answer").strip())
            out.append(replace(s, message=AssistantMessage((note,))))
        elif s.kind == "question":
            out.append(s)
    return out


def _max_page(message: Message) -> int:
    pages = [0]
    for part in message.parts:
        if isinstance(part, ToolResult | Passages):
            pages += [p.last_page for p in part.passages]
        elif isinstance(part, TextPart):
            pages += [c.last_page for c in part.citations]
            pages += [last for _, last in label_pages(part.text)]
    return max(pages)


def _runs_beyond(stored: list[StoredMessage], bound: int | None) -> set[int | None]:
    """Runs whose tool results or answers used pages past ``bound``."""
    if bound is None:
        return set()
    return {s.run_id for s in stored if s.run_id is not None and _max_page(s.message) > bound}


def _result_parts(
    parts: tuple[ResultPart, ...], *, old: bool, bound: int | None
) -> tuple[ResultPart, ...]:
    out: list[ResultPart] = []
    for part in parts:
        if isinstance(part, Passage) and bound is not None and part.last_page > bound:
            out.append(Note(WITHHELD_PASSAGE))
        elif isinstance(part, BookText) and old:
            out.append(Note(f"(the {part.kind} listed earlier is not repeated)"))
        else:
            out.append(part)
    if not old:
        return tuple(out)
    titles = [p.title or p.label for p in out if isinstance(p, Passage)]
    others = " ".join(p.text for p in out if isinstance(p, Note))
    summary = ("Earlier results: " + "; ".join(titles)) if titles else others
    return (Note(summary[:OLD_RESULT_CHARS] or "(earlier result)"),)


def _replayable(
    message: Message, *, old: bool, bound: int | None, withheld: bool
) -> Message | None:
    if isinstance(message, AssistantMessage):
        said: list[AssistantPart] = []
        for said_part in message.parts:
            if isinstance(said_part, TextPart):
                if said_part.text.strip():
                    said.append(TextPart(WITHHELD_ANSWER if withheld else said_part.text))
            else:
                said.append(said_part)
        return AssistantMessage(tuple(said)) if said else None
    user_parts: list[UserPart] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            user_parts.append(
                ToolResult(
                    part.call_id, _result_parts(part.parts, old=old, bound=bound), part.is_error
                )
            )
        elif isinstance(part, Passages):
            kept = tuple(p for p in part.passages if bound is None or p.last_page <= bound)
            if kept:
                user_parts.append(Passages(kept))
        else:
            user_parts.append(part)
    return UserMessage(tuple(user_parts)) if user_parts else None


def _merge(a: Message, b: Message) -> Message:
    if isinstance(a, AssistantMessage) and isinstance(b, AssistantMessage):
        return AssistantMessage(a.parts + b.parts)
    assert isinstance(a, UserMessage) and isinstance(b, UserMessage)
    return UserMessage(a.parts + b.parts)


def _pair_tools(messages: list[Message]) -> list[Message]:
    """Keep only tool calls answered in the next message, and tool results that answer the
    previous message's calls; drop messages left empty."""
    out: list[Message] = []
    for i, msg in enumerate(messages):
        if isinstance(msg, AssistantMessage):
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {r.call_id for r in nxt.results} if isinstance(nxt, UserMessage) else set()
            kept: tuple[AssistantPart, ...] = tuple(
                p for p in msg.parts if not isinstance(p, ToolCall) or p.id in answered
            )
            new: Message | None = AssistantMessage(kept) if kept else None
        else:
            prev = out[-1] if out and isinstance(out[-1], AssistantMessage) else None
            asked = {c.id for c in prev.calls} if prev is not None else set()
            results: list[UserPart] = [
                p for p in msg.parts if isinstance(p, ToolResult) and p.call_id in asked
            ]
            others: list[UserPart] = [p for p in msg.parts if not isinstance(p, ToolResult)]
            user = tuple(results + others)
            new = UserMessage(user) if user else None
        if new is None:
            continue
        if out and type(out[-1]) is type(new):
            out[-1] = _merge(out[-1], new)
        else:
            out.append(new)
    return out


def _clean_start(messages: list[Message]) -> list[Message]:
    while messages and (not isinstance(messages[0], UserMessage) or messages[0].results):
        messages = messages[1:]
    return messages
