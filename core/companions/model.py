"""Companions with a model: a recap of each finished chapter written from that chapter's own
text, and a short X-Ray note on an entry written from its passages within the bound.

Every call goes through the chat's provider (``AgentService.provider()``), is checked by the
chat's answer check (a ``SpoilerGuard`` at the reader's bound: a sentence naming what comes
later is dropped), and its trace (what was asked, the reply's start, stop reason, tokens,
time, sentences withheld) is written to the book's companions event log
(``core.companions.trace``: ``--trace`` in the CLI, "Show trace" in the tabs) and its tokens
kept with the book (``companion_item`` "usage", the cost meter; gone with it).
Results are kept (``companion_item``: "recap" ``model:<chapter text hash>``, "xray_note"
``<entry>:<pages hash>``) and never asked again. Before a job, ``plan`` says what it will
cost ("About 45,000 tokens, ~$0.05"); ``check_budget`` refuses a job that would take the
book past its budget (chat and companions together).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.companions import recap as recap_mod
from core.companions import xray as xray_mod
from core.companions.store import CompanionStore
from core.domain.messages import Usage
from core.domain.pricing import estimate_cost
from core.errors import MarginError
from core.progress import CancelToken
from core.prompts import load_prompt

if TYPE_CHECKING:
    import peewee as pw

    from core.agent.providers.base import ChatProvider
    from core.agent.spoilers import SpoilerIndex

CHARS_PER_TOKEN = 4
RECAP_OUT = 350  # tokens a chapter summary may take
NOTE_OUT = 150
QUIZ_OUT = 400
NOTE_ENTRIES = 20  # the X-Ray's most named entries get a note
NOTE_PAGES = 4  # … written from this many of their pages (the first ones and the telling ones)
PAGE_CHARS = 2500


class BudgetError(MarginError):
    """A companion job would take the book past its budget."""


@dataclass(frozen=True)
class Call:
    kind: str  # "recap" or "xray_note"
    key: str  # where the result is kept
    title: str  # for progress: "Chapter IV", "Mr. Darcy"
    prompt: str
    max_tokens: int
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return (len(self.prompt) + 600) // CHARS_PER_TOKEN + self.max_tokens


@dataclass(frozen=True)
class Plan:
    calls: tuple[Call, ...]
    model: str

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.calls)

    @property
    def cost(self) -> float | None:
        out = sum(c.max_tokens for c in self.calls)
        return estimate_cost(self.model, Usage(self.tokens - out, out))

    def describe(self) -> str:
        """ "About 45,000 tokens, ~$0.05" (no price for a local model)."""
        tokens = f"About {round(self.tokens, -3 if self.tokens > 5000 else -2):,} tokens"
        cost = self.cost
        return tokens + (f", ~${cost:.2f}" if cost is not None else "")


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass") + b"\x00")
    return h.hexdigest()[:24]


def plan(
    db: pw.SqliteDatabase,
    book_id: int,
    model: str,
    *,
    recap: bool = True,
    notes: bool = True,
    quiz: bool = False,
) -> Plan:
    """The calls a full job needs now (what is kept is not asked again)."""
    from core.store.library import page_texts

    store = CompanionStore(db)
    bound = xray_mod.bound_of(db, book_id)
    title = str(db.execute_sql("SELECT title FROM book WHERE id = ?", (book_id,)).fetchone()[0])
    texts = dict(page_texts(db, book_id))
    calls: list[Call] = []
    if recap:
        for chapter in recap_mod.chapters(db, book_id, texts):
            if chapter.last > bound:
                break
            pages = recap_mod.chapter_text(texts, chapter)
            key = f"model:{recap_mod.text_key(pages)}"
            if store.item(book_id, recap_mod.KIND, key, recap_mod.RECAP_VERSION) is not None:
                continue
            prompt = load_prompt(
                "companion_recap",
                chapter=chapter.title,
                book_title=title,
                first=str(chapter.first),
                last=str(chapter.last),
                text="\n\n".join(t for _, t in pages),
            )
            calls.append(Call("recap", key, chapter.title, prompt, RECAP_OUT))
    if quiz:
        from core.companions.cards import QUIZ_VERSION

        for chapter in recap_mod.chapters(db, book_id, texts):
            if chapter.last > bound:
                break
            pages = recap_mod.chapter_text(texts, chapter)
            key = recap_mod.text_key(pages)
            if store.item(book_id, "quiz", key, QUIZ_VERSION) is not None:
                continue
            prompt = load_prompt(
                "companion_quiz",
                chapter=chapter.title,
                book_title=title,
                first=str(chapter.first),
                last=str(chapter.last),
                text="\n\n".join(t for _, t in pages),
            )
            meta: dict[str, Any] = {"first": chapter.first, "last": chapter.last}
            calls.append(Call("quiz", key, chapter.title, prompt, QUIZ_OUT, meta))
    if notes:
        made = xray_mod.current(db, book_id)
        for entry in made.entries[:NOTE_ENTRIES]:
            used = _note_pages(entry)
            key = f"{entry.key}:{_digest(*map(str, used))}"
            if store.item(book_id, xray_mod.KIND_NOTE, key, xray_mod.NOTE_VERSION) is not None:
                continue
            passages = "\n\n".join(
                f'<passage page="{p}">{texts.get(p, "")[:PAGE_CHARS]}</passage>' for p in used
            )
            prompt = load_prompt(
                "companion_xray",
                book_title=title,
                read_to=str(bound),
                name=entry.name,
                aliases=", ".join(entry.aliases) or "nothing else",
                passages=passages,
            )
            meta = {"entry": entry.key, "pages": used}
            calls.append(Call(xray_mod.KIND_NOTE, key, entry.name, prompt, NOTE_OUT, meta))
    return Plan(tuple(calls), model)


def _note_pages(entry: xray_mod.Entry) -> list[int]:
    """The pages a note is written from: where the entry first comes, and its telling ones."""
    pages = [entry.first_page, *(p for p, _ in entry.description)]
    pages += [p for p, _, _ in entry.mentions]
    seen: list[int] = []
    for p in pages:
        if p not in seen:
            seen.append(p)
    return sorted(seen[:NOTE_PAGES])


def spent(db: pw.SqliteDatabase, book_id: int) -> tuple[Usage, float | None]:
    """Tokens and estimated cost of the companions' calls on this book so far."""
    total = Usage()
    cost: float | None = None
    for value in CompanionStore(db).items(book_id, "usage", 1).values():
        u = Usage(*value["usage"])
        total = Usage(
            total.input_tokens + u.input_tokens,
            total.output_tokens + u.output_tokens,
            total.cache_read_tokens + u.cache_read_tokens,
            total.cache_write_tokens + u.cache_write_tokens,
        )
        c = estimate_cost(str(value.get("model", "")), u)
        if c is not None:
            cost = (cost or 0.0) + c
    return total, cost


def check_budget(job: Plan, budget: float, already: float) -> None:
    """Refuse a job that would take the book past ``budget`` (dollars; 0 = none), in words."""
    cost = job.cost
    if budget <= 0 or cost is None:
        return
    if already + cost > budget:
        raise BudgetError(
            "budget",
            f"{job.describe()} would take this book past its budget of ${budget:.2f} "
            f"(${already:.2f} spent so far).",
            hint="Raise the budget in Settings, or ask for less (a chapter at a time).",
        )


async def run(
    db: pw.SqliteDatabase,
    book_id: int,
    job: Plan,
    provider: ChatProvider,
    index: SpoilerIndex,
    *,
    progress: Callable[[int, int, str], None] | None = None,
    cancel: CancelToken | None = None,
    events: Path | None = None,
) -> Usage:
    """Make every call of ``job`` in turn, keeping each result as it comes (a Stop keeps what
    is done). Returns the tokens used. With ``events`` (the event logs' folder), every call is
    written to the book's companions log (``core.companions.trace``)."""
    from core.agent.eventlog import excerpt
    from core.agent.loop_state import summarise_request
    from core.agent.providers.base import StreamText
    from core.agent.spoilers import SpoilerGuard
    from core.agent.types import Question, TurnRequest, TurnResult, UserMessage
    from core.companions.trace import JobTrace, scrub

    store = CompanionStore(db)
    bound = xray_mod.bound_of(db, book_id)
    system = load_prompt("companion_system")
    used = Usage()
    trace = JobTrace(events, book_id)
    trace.write(
        "JOB_STARTED",
        provider=provider.name,
        model=provider.model,
        calls=len(job.calls),
        kinds=sorted({c.kind for c in job.calls}),
        estimate=job.describe(),
        spoiler_bound=bound,
    )
    made = 0
    status, error = "done", ""
    try:
        for i, call in enumerate(job.calls):
            if progress is not None:
                progress(i, len(job.calls), call.title)
            if cancel is not None and cancel.cancelled:
                status = "stopped"
                break  # Stop: what is done is kept
            request = TurnRequest(
                model=provider.model,
                system=system,
                messages=(UserMessage((Question(call.prompt),)),),
                max_tokens=call.max_tokens,
                tool_choice="none",
            )
            pieces: list[str] = []
            result: TurnResult | None = None
            started = time.perf_counter()
            try:
                async for event in provider.stream_turn(request):
                    if isinstance(event, StreamText):
                        pieces.append(event.text)
                    elif isinstance(event, TurnResult):
                        result = event
            except BaseException as exc:  # traced, then raised again
                trace.write(
                    "LLM_INVOCATION",
                    step=i + 1,
                    kind=call.kind,
                    title=call.title,
                    request=summarise_request(request),
                    response=(
                        {"stopped": True, "text": excerpt("".join(pieces))}
                        if isinstance(exc, asyncio.CancelledError)
                        else {"error": _error_text(exc, scrub)}
                    ),
                    usage=None,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                    withheld=0,
                )
                raise
            text = "".join(pieces) or (result.message.text if result is not None else "")
            # the answer's own check: later names, disguises, and the semantic layer
            guard = SpoilerGuard(index, read_to=bound, question="")
            segments = guard.feed(text) + guard.flush()
            shown = "".join(s.text for s in segments if not s.hidden).strip()
            usage = result.usage if result is not None else Usage()
            ms = (time.perf_counter() - started) * 1000
            used = Usage(
                used.input_tokens + usage.input_tokens, used.output_tokens + usage.output_tokens
            )
            hidden = [s for s in segments if s.hidden]
            questions: list[dict[str, object]] = []
            if call.kind == "quiz":  # each question checked on its own (a hidden one dropped)
                asked = parse_quiz(text, db, book_id, call.meta["first"], call.meta["last"])
                questions = [q for q in asked if _card_safe(index, bound, q)]
                withheld = len(asked) - len(questions)
            else:
                withheld = len(hidden)
            stop = str(result.stop_reason.value) if result is not None else ""
            terms = sorted({t.term for s in hidden for t in s.terms})
            trace.write(
                "LLM_INVOCATION",
                step=i + 1,
                kind=call.kind,
                title=call.title,
                request=summarise_request(request),
                response={"stop_reason": stop, "text": excerpt(text)},
                usage=usage.__dict__,
                duration_ms=round(ms, 2),
                withheld=withheld,
                terms=terms,
            )
            for n, s in enumerate(hidden):
                trace.write(
                    "SPOILER_CHECK",
                    step=i + 1,
                    hidden=n,
                    read_to=bound,
                    terms=[{"term": t.term, "first_page": t.first_page} for t in s.terms],
                )
            store.put_item(
                book_id,
                "usage",
                f"{time.time():.6f}:{call.kind}:{call.key}",
                1,
                {
                    "usage": [
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cache_read_tokens,
                        usage.cache_write_tokens,
                    ],
                    "model": provider.model,
                    "kind": call.kind,
                    "title": call.title,
                    "request_chars": len(call.prompt),
                    "response": text[:300],
                    "stop_reason": stop,
                    "ms": round(ms),
                    "withheld": withheld,
                },
            )
            made += 1
            if call.kind == "quiz":
                from core.companions.cards import QUIZ_VERSION

                store.put_item(book_id, "quiz", call.key, QUIZ_VERSION, {"questions": questions})
            elif call.kind == "recap":
                store.put_item(
                    book_id, recap_mod.KIND, call.key, recap_mod.RECAP_VERSION, {"text": shown}
                )
            else:
                store.put_item(
                    book_id,
                    xray_mod.KIND_NOTE,
                    call.key,
                    xray_mod.NOTE_VERSION,
                    {"text": shown, **call.meta},
                )
    except asyncio.CancelledError:
        status = "stopped"
        raise
    except BaseException as exc:
        status, error = "failed", _error_text(exc, scrub)
        raise
    finally:
        trace.write(
            "JOB_FINISHED",
            status=status,
            calls=made,
            usage=used.__dict__,
            error=error or None,
        )
    recap_mod.forget_view(db, book_id)
    CompanionStore(db).drop_items(book_id, "xray")  # notes join the entries when made again
    if progress is not None:
        progress(len(job.calls), len(job.calls), "")
    return used


def _error_text(exc: BaseException, scrub: Callable[[str], str]) -> str:
    """What the trace keeps of an error: its kind and message, never a key."""
    message = getattr(exc, "message", "") or str(exc)
    return scrub(f"{exc.__class__.__name__}: {message}")[:300]


def _card_safe(index: SpoilerIndex, bound: int, question: dict[str, object]) -> bool:
    """Whether a quiz question may become a card: its quote is in the pages read (found,
    ``parse_quiz``), and the answer check shows its question, answer and quote."""
    from core.agent.spoilers import SpoilerGuard

    page = question.get("page")
    if not isinstance(page, int) or page > bound:
        return False  # a quote the book does not have (made up), or one past the bound
    for part in ("question", "answer", "quote"):
        text = str(question.get(part, "")).strip()
        guard = SpoilerGuard(index, read_to=bound, question="")
        if text and any(s.hidden for s in guard.feed(text) + guard.flush()):
            return False
    return True


def parse_quiz(
    text: str, db: pw.SqliteDatabase, book_id: int, first: int, last: int
) -> list[dict[str, object]]:
    """The questions of a quiz reply (JSON, perhaps inside a code fence), each with the page
    of its quote within the chapter (None when the book does not have the quote: a made-up
    quote never goes on a card). A reply that is not such JSON gives no questions."""
    import json
    import re

    from core.store.library import page_texts

    match = re.search(r"\[.*\]", text, re.DOTALL)
    try:
        items = json.loads(match.group(0)) if match else []
    except ValueError:
        items = []
    pages = [(n, _folded(t)) for n, t in page_texts(db, book_id) if first <= n <= last]
    whole = " ".join(t for _, t in pages)
    starts = [0]
    for _, t in pages:
        starts.append(starts[-1] + len(t) + 1)
    out: list[dict[str, object]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not str(item.get("question", "")).strip():
            continue
        quote = " ".join(str(item.get("quote", "")).split())
        at = whole.find(_folded(quote)) if len(quote) >= 8 else -1
        page = next((n for (n, _), s in zip(pages, starts[1:], strict=True) if at < s), None)
        page = page if at >= 0 else None
        out.append(
            {
                "question": str(item["question"]).strip(),
                "answer": str(item.get("answer", "")).strip(),
                "quote": quote,
                "page": page,
            }
        )
    return out


_QUOTE_FOLD = str.maketrans(
    "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2013\u2014", "''''\"\"\"\"--"
)


def _folded(text: str) -> str:
    """Text compared for a quote: spaces collapsed, curly quotes and dashes plain, lower case."""
    return " ".join(text.translate(_QUOTE_FOLD).split()).lower()
