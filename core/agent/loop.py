"""The agent loop: model turns, tool calls and limits for one run, with the run's state.

One loop for every strategy. A strategy only says whether tools are offered and may prepare
the messages first (``strategies.py``); the loop owns the state, decides what happens after
each turn from one table (``STOP_TABLE``), runs tools (read-only ones side by side on the
database threads), enforces the limits, and reports everything through its ``RunSink``.
It never retries a model call: the provider does (``providers/``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from core.agent import repetition
from core.agent.answer import for_model, marker
from core.agent.context import citable, label_pages
from core.agent.events import (
    AgentEvent,
    Citation,
    Notice,
    SpoilerHidden,
    TextDelta,
    ToolCallRecord,
    ToolFinished,
    ToolStarted,
    TurnStarted,
    UsageReport,
)
from core.agent.providers.base import (
    ChatProvider,
    StreamCitation,
    StreamRetry,
    StreamText,
)
from core.agent.repetition import RepetitionCheck
from core.agent.spoiler_verify import SupportVerifier
from core.agent.spoilers import Segment, SpoilerGuard
from core.agent.tools import ToolBox, ToolContext, ToolOutput, error_output
from core.agent.types import (
    AssistantMessage,
    CitationRef,
    Instruction,
    Message,
    Note,
    Passage,
    StopReason,
    TextPart,
    ToolCall,
    ToolResult,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    Withheld,
)
from core.errors import LLMCode, LLMError
from core.prompts import load_prompt
from core.settings import AgentLimits

LIMIT_NOTES = {
    "turns": "the limit of steps for one question",
    "tool_calls": "the limit of tool calls for one question",
    "deadline": "the time limit for one question",
}
STOPPED_RESULT = "Stopped by the reader before this ran."


class Next(Enum):
    DONE = "done"
    TOOLS = "tools"
    CONTINUE = "continue"


@dataclass(frozen=True)
class StopRule:
    next: Next
    note: str = ""  # added to the answer for the reader
    notice: str = ""  # told to the reader while it happens


# What happens after a turn, for every stop reason the API defines (a test checks that this
# table covers the SDK's list).
STOP_TABLE: Mapping[StopReason, StopRule] = {
    StopReason.END_TURN: StopRule(Next.DONE),
    StopReason.STOP_SEQUENCE: StopRule(Next.DONE),
    StopReason.TOOL_USE: StopRule(Next.TOOLS),
    StopReason.PAUSE_TURN: StopRule(Next.CONTINUE),
    StopReason.MAX_TOKENS: StopRule(
        Next.DONE,
        "\n\n*(The answer was cut short: it reached the length limit.)*",
        "The answer reached its length limit and was cut.",
    ),
    StopReason.CONTEXT_WINDOW: StopRule(
        Next.DONE,
        "\n\n*(The answer was cut short: the conversation filled the model's memory.)*",
        "The conversation is too long for the model; start a new one for long answers.",
    ),
    StopReason.REFUSAL: StopRule(
        Next.DONE,
        "The model declined to answer this question.",
        "The model declined to answer this question.",
    ),
}


# Not a stop reason of the API: Margin closed the stream of an answer that looped.
REPEATING = StopRule(Next.DONE, repetition.NOTE, repetition.NOTICE)
REPETITION_STOP = repetition.STOP_REASON


@dataclass
class RunState:
    """Everything a run has produced so far (read when it ends, however it ends)."""

    step: int = 0
    turns: int = 0
    tool_calls: int = 0
    texts: list[str] = field(default_factory=list)  # text of every turn, in order
    citations: list[CitationRef] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)  # every passage the tools returned
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    limit_reached: str = ""
    final: AssistantMessage = field(default_factory=lambda: AssistantMessage(()))
    withheld: list[Withheld] = field(default_factory=list)
    pending_calls: tuple[ToolCall, ...] = ()
    started: float = field(default_factory=time.monotonic)
    repeating: bool = False  # the answer looped and its stream was closed

    @property
    def answer(self) -> str:
        return "".join(self.texts).strip()


class RunSink(Protocol):
    """Where the loop reports what happens, as it happens (persistence, event log, events)."""

    def emit(self, event: AgentEvent) -> None: ...

    async def assistant_turn(self, message: AssistantMessage, step: int) -> None: ...

    async def tool_results(self, message: UserMessage, step: int) -> None: ...

    async def tool_call(self, record: ToolCallRecord, output: ToolOutput) -> None: ...

    def invocation(
        self, step: int, request: TurnRequest, result: TurnResult | None, error: str, ms: float
    ) -> None: ...


class Strategy(Protocol):
    name: str
    uses_tools: bool

    async def prepare(self, loop: AgentLoop, messages: list[Message]) -> list[Message]:
        """The messages of the first turn (a strategy may search first)."""
        ...


class AgentLoop:
    def __init__(
        self,
        *,
        provider: ChatProvider,
        tools: ToolBox,
        ctx: ToolContext,
        limits: AgentLimits,
        sink: RunSink,
        model: str,
        system: str,
        guard: SpoilerGuard | None = None,
        verifier: SupportVerifier | None = None,
    ) -> None:
        self.provider = provider
        self.guard = guard
        self.verifier = verifier  # a model's check of doubtful sentences (spoiler_verify)
        self.tools = tools
        self.ctx = ctx
        self.limits = limits
        self.sink = sink
        self.model = model
        self.system = system
        self.state = RunState()
        self.deadline = self.state.started + limits.deadline_s
        self.messages: list[Message] = []
        self._shorter: Callable[[], list[Message]] | None = None
        self._history_len = 0
        self._repeats: RepetitionCheck | None = None
        self._turn_texts = 0
        self._turn_withheld = 0
        self._turn_pieces: list[tuple[str, str]] = []
        self._turn_deltas = 0

    @property
    def max_tokens(self) -> int:
        """The length limit of one answer: local models have their own (they are slow, and
        a small one can loop)."""
        if self.provider.name == "local":
            return self.limits.local_max_output_tokens
        return self.limits.max_output_tokens

    @property
    def provider_supports_citations(self) -> bool:
        return bool(getattr(self.provider, "supports_citations", False))

    # limits ----------------------------------------------------------------------------

    def limit_hit(self) -> str:
        if self.state.turns >= self.limits.max_turns:
            return "turns"
        if self.state.tool_calls >= self.limits.max_tool_calls:
            return "tool_calls"
        if time.monotonic() >= self.deadline:
            return "deadline"
        return ""

    # the run -------------------------------------------------------------------------------

    async def run(
        self,
        strategy: Strategy,
        history: list[Message],
        question: UserMessage,
        *,
        shorter_history: Callable[[], list[Message]] | None = None,
    ) -> None:
        """Answer ``question`` after ``history``. If the server says the conversation is too
        long before anything was shown, ``shorter_history`` builds a shorter one (only then),
        used once."""
        self._shorter = shorter_history
        self._history_len = len(history)
        self.messages = await strategy.prepare(self, [*history, question])
        tools = self.tools.specs() if strategy.uses_tools else ()
        while True:
            limit = self.limit_hit() if strategy.uses_tools else ""
            if limit:
                await self._final_call(tools, limit)
                return
            result = await self.turn(
                TurnRequest(
                    self.model,
                    self.system,
                    tuple(self.messages),
                    tools,
                    self.max_tokens,
                )
            )
            rule = STOP_TABLE[result.stop_reason]
            calls = result.message.calls
            if rule.next is Next.TOOLS and calls and tools:
                await self.sink.assistant_turn(result.message, self.state.step)
                self.messages.append(result.message)
                results = await self.run_tools(calls)
                answer = UserMessage(results)
                await self.sink.tool_results(answer, self.state.step)
                self.messages.append(answer)
                if self.state.answer:
                    self.state.texts.append("\n\n")
                continue
            if rule.next is Next.CONTINUE and not self.limit_hit():
                self.messages.append(result.message)
                continue
            self._finish(result.message, result.stop_reason)
            return

    def _finish(self, message: AssistantMessage, stop: StopReason) -> None:
        rule = (
            REPEATING
            if self.state.repeating
            else STOP_TABLE.get(stop, STOP_TABLE[StopReason.END_TURN])
        )
        if stop is StopReason.TOOL_USE or stop is StopReason.PAUSE_TURN:
            stop = StopReason.END_TURN
        texts = tuple(p for p in message.parts if isinstance(p, TextPart) and p.text.strip())
        if self.state.withheld:
            # what later turns replay: the answer without its held-back sentences
            said = "".join(t.text for t in texts)
            kept = [w for w in self.state.withheld if w.text in said]
            for w in kept:
                said = said.replace(w.text, marker(w.index), 1)
            cites = tuple(c for t in texts for c in t.citations)
            texts = (TextPart(for_model(said), cites),) if said.strip() else ()
            self.state.final = AssistantMessage((*texts, *kept))
        else:
            self.state.final = AssistantMessage(texts)
        self.state.stop_reason = REPETITION_STOP if self.state.repeating else stop.value
        if rule.note:
            self.state.texts.append(rule.note if self.state.answer else rule.note.strip())
        if rule.notice:
            self.sink.emit(Notice(rule.notice, self.state.step))

    async def _final_call(self, tools: tuple[Any, ...], limit: str) -> None:
        """At a limit: one last call, tools kept (the API rejects tool blocks in history
        without them) but not allowed, with the instruction to answer from what was found."""
        state = self.state
        state.limit_reached = limit
        self.sink.emit(
            Notice(f"Reached {LIMIT_NOTES[limit]}; answering from what was found.", state.step)
        )
        instruction = Instruction(load_prompt("finish_from_gathered", limit=LIMIT_NOTES[limit]))
        messages = list(self.messages)
        if messages and isinstance(messages[-1], UserMessage):
            messages[-1] = UserMessage((*messages[-1].parts, instruction))
        else:
            messages.append(UserMessage((instruction,)))
        request = TurnRequest(
            self.model,
            self.system,
            tuple(messages),
            tools,
            self.max_tokens,
            tool_choice="none",
        )
        result = await self.turn(request, grace=60.0)
        self._finish(result.message, result.stop_reason)
        state.texts.append(f"\n\n*(Margin stopped looking after reaching {LIMIT_NOTES[limit]}.)*")

    # model turns -----------------------------------------------------------------------

    async def turn(
        self, request: TurnRequest, *, visible: bool = True, grace: float = 0.0
    ) -> TurnResult:
        """One model turn, streamed, within the run's deadline."""
        self.state.step += 1
        self.state.turns += 1
        step = self.state.step
        if visible:
            self.sink.emit(TurnStarted(step))
        while True:
            started = time.perf_counter()
            shown = False
            self._begin_turn(visible)
            stream = self.provider.stream_turn(request)
            try:
                remaining = max(1.0, self.deadline - time.monotonic()) + grace
                async with asyncio.timeout(remaining):
                    async for event in stream:
                        if isinstance(event, StreamText):
                            if visible:
                                shown = True
                                await self._show(event.text, step)
                                if self._repeats is not None and self._repeats.feed(event.text):
                                    await _close(stream)  # stop the model now, not at its limit
                                    result = await self._cut_loop(step)
                                    self.sink.invocation(
                                        step,
                                        request,
                                        result,
                                        "",
                                        (time.perf_counter() - started) * 1000,
                                    )
                                    return result
                        elif isinstance(event, StreamCitation):
                            self._cite(event.citation, step)
                        elif isinstance(event, StreamRetry):
                            self.sink.emit(Notice(event.notice, step))
                        else:
                            if visible:
                                await self._show(None, step)  # the end of the turn: the rest
                            self.state.usage = self.state.usage + event.usage
                            self.sink.emit(UsageReport(event.usage, step))
                            self.sink.invocation(
                                step, request, event, "", (time.perf_counter() - started) * 1000
                            )
                            return event
                raise LLMError(
                    LLMCode.BAD_RESPONSE,
                    f"{self.provider.where} ended the answer without finishing it.",
                    hint="Try again.",
                )
            except TimeoutError:
                self.sink.invocation(
                    step, request, None, "deadline", (time.perf_counter() - started) * 1000
                )
                raise LLMError(
                    LLMCode.TIMEOUT,
                    f"The answer took longer than the limit of {self.limits.deadline_s:.0f} seconds.",
                    hint="Try a narrower question, or raise the limit in Settings.",
                ) from None
            except LLMError as err:
                self.sink.invocation(
                    step,
                    request,
                    None,
                    f"{err.code}: {err.message}",
                    (time.perf_counter() - started) * 1000,
                )
                shorter = self._shorter
                if (
                    err.code != LLMCode.CONTEXT_TOO_LONG
                    or shorter is None
                    or shown
                    or self.state.answer
                    or self.state.tool_calls
                ):
                    raise
                self._shorter = None
                self.sink.emit(
                    Notice(
                        "The conversation was too long for the model; retrying with less history.",
                        step,
                    )
                )
                self.messages = shorter() + self.messages[self._history_len :]
                request = dataclasses.replace(request, messages=tuple(self.messages))
            finally:
                await _close(stream)

    # a looping answer ------------------------------------------------------------------

    def _begin_turn(self, visible: bool) -> None:
        """Start watching a visible turn's text for a loop: a local model's (Claude does not
        fall into one; passages mode quotes the book)."""
        self._repeats = RepetitionCheck() if visible and self.provider.name == "local" else None
        self._turn_texts = len(self.state.texts)
        self._turn_withheld = len(self.state.withheld)
        self._turn_pieces = []  # (the model's text, what was shown) in order
        self._turn_deltas = 0

    async def _cut_loop(self, step: int) -> TurnResult:
        """The turn's text cut where the loop began (plus one copy): the stream is closed,
        the answer keeps what came before, and the run ends marked (``REPEATING``)."""
        check = self._repeats
        assert check is not None and check.cut is not None
        cut = check.cut
        state = self.state
        covered = 0  # raw text already shown (or held back as a spoiler) up to the cut
        kept_shown: list[str] = []
        for raw, shown in self._turn_pieces:
            if covered + len(raw) <= cut:
                kept_shown.append(shown)
                covered += len(raw)
            else:
                if covered < cut and raw == shown:
                    kept_shown.append(shown[: cut - covered])
                    covered = cut
                break
        del state.texts[self._turn_texts :]
        state.texts.append("".join(kept_shown))
        said = state.texts[-1]
        state.withheld[self._turn_withheld :] = [
            w for w in state.withheld[self._turn_withheld :] if marker(w.index) in said
        ]
        if self.guard is not None:
            self.guard.flush()  # the rest of the loop is dropped unread
            if covered < cut:  # the kept copy was still waiting in the check: check it now
                self.guard.feed(check.text[covered:cut])
                await self._show(None, step, verify=False)
        state.texts[-1] = state.texts[-1].rstrip()
        state.repeating = True
        usage = Usage(output_tokens=self._turn_deltas)  # the server's count never came
        state.usage = state.usage + usage
        self.sink.emit(UsageReport(usage, step))
        return TurnResult(
            AssistantMessage((TextPart(check.text[:cut].rstrip()),)), StopReason.END_TURN, usage
        )

    async def _show(self, text: str | None, step: int, *, verify: bool = True) -> None:
        """Streamed text on its way to the reader. With the spoiler check, whole sentences go
        out once checked (only the sentence being written waits); a sentence that names
        something from after the bound is held back and a marker stands in its place.
        ``None`` ends the turn."""
        if text is not None:
            self._turn_deltas += 1
        if self.guard is None:
            if text:
                self.state.texts.append(text)
                self._turn_pieces.append((text, text))
                self.sink.emit(TextDelta(text, step))
            return
        segments = (
            self.guard.feed(text) + self.guard.release() if text is not None else self.guard.flush()
        )
        for segment in segments:
            if segment.doubtful and verify and self.verifier is not None:
                segment = await self._verify(segment, step)
            if not segment.hidden:
                self.state.texts.append(segment.text)
                self._turn_pieces.append((segment.text, segment.text))
                self.sink.emit(TextDelta(segment.text, step))
                continue
            item = Withheld(
                len(self.state.withheld) + 1,
                segment.text,
                tuple((t.term, t.first_page) for t in segment.terms),
                self.guard.read_to or 0,
                segment.kind,
            )
            self.state.withheld.append(item)
            self.state.texts.append(marker(item.index))
            self._turn_pieces.append((segment.text, marker(item.index)))
            self.sink.emit(SpoilerHidden(item, step))

    async def _verify(self, segment: Segment, step: int) -> Segment:
        """A doubtful sentence, verified by the model (``core.agent.spoiler_verify``); the
        call's tokens count in the answer's usage and it is logged like any model call."""
        assert self.verifier is not None
        check = await self.verifier(segment.text)
        if check.result is not None and check.request is not None:
            self.state.usage = self.state.usage + check.result.usage
            self.sink.emit(UsageReport(check.result.usage, step))
            self.sink.invocation(step, check.request, check.result, "", check.ms)
        if check.supported is None:  # no verdict: the lexical decision stands
            return segment
        if check.supported:  # shown; a sentence held only on weak evidence too
            return dataclasses.replace(segment, hidden=False, terms=())
        if segment.hidden:
            return segment
        return dataclasses.replace(segment, hidden=True, kind="unsupported")

    async def flush_text(self) -> None:
        """A run that ends early (Stop, a failure) still shows what was held back, checked
        (lexically: no model call after a Stop)."""
        if self.guard is not None and self.guard.pending and not self.state.repeating:
            await self._show(None, self.state.step, verify=False)

    def _cite(self, ref: CitationRef, step: int) -> None:
        if not citable(ref.first_page, ref.last_page, self.ctx.book.page_count, self.ctx.bound):
            return  # past the bound or the book: refused whole, never clamped
        if ref not in self.state.citations:
            self.state.citations.append(ref)
            self.sink.emit(Citation(ref, step))

    def label_citations(self) -> None:
        """For servers without citations: ``[p. N]`` labels in the answer become citations,
        quoting exact text the tools returned for that page (so the reader can find it)."""
        book = self.ctx.book
        seen = {(c.first_page, c.last_page) for c in self.state.citations}
        for first, last in label_pages(self.state.answer):
            if (first, last) in seen or not citable(first, last, book.page_count, self.ctx.bound):
                continue  # past the bound or the book: refused whole, never clamped
            seen.add((first, last))
            source = next(
                (p for p in self.state.passages if p.first_page <= first <= p.last_page), None
            )
            quote = source.quote or " ".join(source.text.split())[:300] if source else ""
            self._cite(CitationRef(book.id, first, last, quote), self.state.step)

    # tools -----------------------------------------------------------------------------

    async def run_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run one tool outside the model's turns (a strategy's own search)."""
        return (await self.run_tool_calls([(name, arguments)]))[0]

    async def run_tool_calls(self, calls: list[tuple[str, Mapping[str, Any]]]) -> list[ToolOutput]:
        """Run tools outside the model's turns, read-only ones side by side (a strategy's
        searches); outputs come back in the same order."""
        step = self.state.step
        typed = tuple(
            ToolCall(f"{name}_{step}" + (f"_{i}" if i else ""), name, dict(arguments))
            for i, (name, arguments) in enumerate(calls)
        )
        return await self._run_calls(typed)

    async def run_tools(self, calls: tuple[ToolCall, ...]) -> tuple[ToolResult, ...]:
        """Run the tool calls of one reply; results come back in the same order."""
        outputs = await self._run_calls(calls)
        return tuple(
            ToolResult(call.id, out.parts, out.is_error)
            for call, out in zip(calls, outputs, strict=True)
        )

    async def _run_calls(self, calls: tuple[ToolCall, ...]) -> list[ToolOutput]:
        state = self.state
        step = state.step
        allowed = max(0, self.limits.max_tool_calls - state.tool_calls)
        state.pending_calls = calls
        outputs: list[ToolOutput | None] = [None] * len(calls)
        records: list[ToolCallRecord | None] = [None] * len(calls)

        async def one(index: int, call: ToolCall) -> None:
            self.sink.emit(
                ToolStarted(
                    call.id,
                    call.name,
                    dict(call.arguments),
                    step,
                    self.tools.describe(call.name, call.arguments),
                )
            )
            started = time.perf_counter()
            if index >= allowed:
                output = error_output(
                    "The limit of tool calls for this question was reached; answer with what you have.",
                    "limit reached",
                )
            else:
                try:
                    output = await self.tools.call(self.ctx, call.name, call.arguments)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a broken tool must not end the run
                    output = error_output(f"The tool failed: {type(exc).__name__}.", "failed")
            duration = (time.perf_counter() - started) * 1000
            record = ToolCallRecord(
                call.id,
                call.name,
                dict(call.arguments),
                output.summary,
                output.is_error,
                duration,
                step,
            )
            records[index] = record
            self.sink.emit(
                ToolFinished(
                    call.id,
                    call.name,
                    duration,
                    output.summary,
                    output.is_error,
                    step,
                    output.pages,
                    dict(output.detail),
                    output.passages,
                )
            )
            outputs[index] = output

        state.tool_calls += len(calls)
        reads = [(i, c) for i, c in enumerate(calls) if self.tools.is_read_only(c.name)]
        writes = [(i, c) for i, c in enumerate(calls) if not self.tools.is_read_only(c.name)]
        try:
            await asyncio.gather(*(one(i, c) for i, c in reads))
            for i, c in writes:
                await one(i, c)
        finally:
            # kept and stored in the order the model asked, whatever order they finished in
            for record, output in zip(records, outputs, strict=True):
                if record is not None and output is not None:
                    state.records.append(record)
                    state.passages.extend(output.passages)
                    if self.guard is not None:  # what the answer may draw on: its support
                        for p in output.passages:
                            if self.ctx.bound is None or p.last_page <= self.ctx.bound:
                                self.guard.add_support(p.text)
                    await self.sink.tool_call(record, output)
        state.pending_calls = ()
        return [o if o is not None else error_output("No result.") for o in outputs]

    def unanswered_results(self) -> UserMessage | None:
        """``is_error`` results for tool calls a Stop or a failure left without one (keeps
        the stored history valid for the next question)."""
        calls = self.state.pending_calls
        if not calls:
            return None
        self.state.pending_calls = ()
        return UserMessage(
            tuple(ToolResult(c.id, (Note(STOPPED_RESULT),), is_error=True) for c in calls)
        )


async def _close(stream: Any) -> None:
    """Close a provider's stream (an async generator) now, in this task: the connection
    closes with it."""
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        await closer()


def summarise_request(request: TurnRequest) -> dict[str, Any]:
    """What the event log keeps of a request: shape, not the whole book text."""
    last = request.messages[-1] if request.messages else None
    question = last.question if isinstance(last, UserMessage) else None
    return {
        "model": request.model,
        "messages": len(request.messages),
        "tools": [t.name for t in request.tools],
        "tool_choice": request.tool_choice,
        "system_chars": len(request.system),
        "max_tokens": request.max_tokens,
        "last_user_text": (question.for_model[:300] if question else ""),
    }
