"""The machinery of one run: model turns with streaming, retries and limits, and tool calls.

Strategies (``strategies.py``) decide what to send; this module sends it, turns the
provider's stream into events, runs tools (read-only ones concurrently), keeps the run's
state for persistence at any moment (a Stop can arrive anywhere), and enforces the limits.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.agent.events import (
    AgentEvent,
    Citation,
    CitationRef,
    Notice,
    TextDelta,
    ToolCallRecord,
    ToolFinished,
    ToolStarted,
    TurnStarted,
    Usage,
    UsageReport,
)
from core.agent.providers.base import (
    ChatProvider,
    StreamCitation,
    StreamText,
    TurnRequest,
    TurnResult,
)
from core.agent.tools import ToolContext, ToolOutput, ToolRegistry, parse_source
from core.errors import LLMCode, LLMError
from core.settings import AgentLimits

RETRYABLE_IN_STREAM = (
    LLMCode.OVERLOADED,
    LLMCode.UNEXPECTED,
    LLMCode.BAD_RESPONSE,
    LLMCode.TIMEOUT,
)
_PAGE_LABEL = re.compile(r"\[(?:p|pp)\.\s*(\d+)(?:\s*[–-]\s*(\d+))?\]")


class Recorder(Protocol):
    """Where the loop persists what happens, as it happens."""

    def assistant_turn(self, content: list[dict[str, Any]], step: int) -> None: ...

    def tool_results(self, content: list[dict[str, Any]], step: int) -> None: ...

    def tool_call(self, record: ToolCallRecord, detail: dict[str, Any]) -> None: ...

    def llm_invocation(
        self,
        step: int,
        request: TurnRequest,
        result: TurnResult | None,
        error: str,
        duration_ms: float,
    ) -> None: ...

    def tool_log(self, record: ToolCallRecord, output: ToolOutput) -> None: ...


@dataclass
class RunState:
    """Everything a run has produced so far (read when it ends, however it ends)."""

    step: int = 0
    turns: int = 0
    tool_calls: int = 0
    texts: list[str] = field(default_factory=list)  # text of every turn, in order
    citations: list[CitationRef] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    limit_reached: str = ""
    final_content: list[dict[str, Any]] = field(default_factory=list)
    pending_tool_uses: list[dict[str, Any]] = field(default_factory=list)
    passages: dict[int, str] = field(default_factory=dict)  # page → text seen, for [p. N] citations
    started: float = field(default_factory=time.monotonic)

    @property
    def answer(self) -> str:
        return "".join(self.texts).strip()


class Engine:
    """Runs model turns and tool calls for one run, emitting events."""

    def __init__(
        self,
        *,
        provider: ChatProvider,
        tools: ToolRegistry,
        tool_context: ToolContext,
        limits: AgentLimits,
        recorder: Recorder,
        emit: Callable[[AgentEvent], None],
        state: RunState,
        retry_delay: float = 1.0,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.ctx = tool_context
        self.limits = limits
        self.recorder = recorder
        self.emit = emit
        self.state = state
        self.retry_delay = retry_delay
        self.deadline = state.started + limits.deadline_s

    # limits ----------------------------------------------------------------------------

    def limit_hit(self) -> str:
        if self.state.turns >= self.limits.max_turns:
            return "turns"
        if self.state.tool_calls >= self.limits.max_tool_calls:
            return "tool_calls"
        if time.monotonic() >= self.deadline:
            return "deadline"
        return ""

    # model turns -----------------------------------------------------------------------

    async def turn(
        self, request: TurnRequest, *, visible: bool = True, grace: float = 0.0
    ) -> TurnResult:
        """One model turn, streamed. An error before any text was shown is retried once."""
        self.state.step += 1
        self.state.turns += 1
        step = self.state.step
        if visible:
            self.emit(TurnStarted(step))
        attempt = 0
        while True:
            shown = False
            started = time.perf_counter()
            turn_text: list[str] = []
            try:
                remaining = max(1.0, self.deadline - time.monotonic()) + grace
                async with asyncio.timeout(remaining):
                    async for event in self.provider.stream_turn(request):
                        if isinstance(event, StreamText):
                            turn_text.append(event.text)
                            if visible:
                                shown = True
                                self.state.texts.append(event.text)
                                self.emit(TextDelta(event.text, step))
                        elif isinstance(event, StreamCitation):
                            self._citation(event, step)
                        elif isinstance(event, TurnResult):
                            self.state.usage = self.state.usage + event.usage
                            self.emit(UsageReport(event.usage, step))
                            self.recorder.llm_invocation(
                                step, request, event, "", (time.perf_counter() - started) * 1000
                            )
                            return event
                raise LLMError(
                    LLMCode.BAD_RESPONSE,
                    "The model server ended the answer without finishing it.",
                    hint="Try again.",
                )
            except TimeoutError:
                self.recorder.llm_invocation(
                    step, request, None, "deadline", (time.perf_counter() - started) * 1000
                )
                raise LLMError(
                    LLMCode.TIMEOUT,
                    f"The answer took longer than the limit of {self.limits.deadline_s:.0f} seconds.",
                    hint="Try a narrower question, or raise the limit in Settings.",
                ) from None
            except LLMError as err:
                self.recorder.llm_invocation(
                    step,
                    request,
                    None,
                    f"{err.code}: {err.message}",
                    (time.perf_counter() - started) * 1000,
                )
                if not shown and attempt == 0 and err.code in RETRYABLE_IN_STREAM:
                    attempt += 1
                    self.emit(Notice("The model server had a problem; trying again…", step))
                    await asyncio.sleep(self.retry_delay)
                    continue
                raise

    def _citation(self, event: StreamCitation, step: int) -> None:
        parsed = parse_source(event.source)
        if parsed is None:
            return
        book_id, first, last = parsed
        ref = CitationRef(book_id, first, last, event.cited_text)
        if ref not in self.state.citations:
            self.state.citations.append(ref)
            self.emit(Citation(ref, step))

    def label_citations(self) -> None:
        """For servers without citation support: turn [p. N] labels in the answer into
        citations, quoting what the tools returned for that page when it is known."""
        seen = {(c.first_page, c.last_page) for c in self.state.citations}
        for match in _PAGE_LABEL.finditer(self.state.answer):
            first = int(match.group(1))
            last = int(match.group(2) or first)
            if last < first or (first, last) in seen or not 1 <= first <= self.ctx.book.page_count:
                continue
            seen.add((first, last))
            quote = self.state.passages.get(first, "")[:300]
            ref = CitationRef(self.ctx.book.id, first, min(last, self.ctx.book.page_count), quote)
            self.state.citations.append(ref)
            self.emit(Citation(ref, self.state.step))

    # tools -----------------------------------------------------------------------------

    async def run_tools(self, tool_uses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run the tool calls of one reply; results come back in the same order."""
        step = self.state.step
        allowed = max(0, self.limits.max_tool_calls - self.state.tool_calls)
        self.state.pending_tool_uses = list(tool_uses)
        results: list[dict[str, Any] | None] = [None] * len(tool_uses)

        async def one(index: int, block: dict[str, Any]) -> None:
            name = str(block.get("name", ""))
            arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
            assert isinstance(arguments, dict)
            tool = self.tools.get(name)
            description = tool.describe(arguments) if tool else f"Calling unknown tool '{name}'"
            self.emit(ToolStarted(block["id"], name, arguments, step, description))
            started = time.perf_counter()
            if index >= allowed:
                output = ToolOutput(
                    "The limit of tool calls for this question was reached; answer with what you have.",
                    "limit reached",
                    is_error=True,
                )
            else:
                try:
                    output = await self.tools.call(self.ctx, name, arguments)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a broken tool must not end the run
                    output = ToolOutput(
                        f"The tool failed: {type(exc).__name__}.", "failed", is_error=True
                    )
            duration = (time.perf_counter() - started) * 1000
            record = ToolCallRecord(
                block["id"], name, arguments, output.summary, output.is_error, duration, step
            )
            self.state.records.append(record)
            self._remember_passages(output)
            self.recorder.tool_call(record, {**output.detail, "pages": list(output.pages)})
            self.recorder.tool_log(record, output)
            self.emit(
                ToolFinished(
                    block["id"],
                    name,
                    duration,
                    output.summary,
                    output.is_error,
                    step,
                    output.pages,
                    dict(output.detail),
                )
            )
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": block["id"],
                "content": output.content,
            }
            if output.is_error:
                result["is_error"] = True
            results[index] = result

        self.state.tool_calls += len(tool_uses)
        read_only = [
            (i, b)
            for i, b in enumerate(tool_uses)
            if (t := self.tools.get(str(b.get("name")))) is None or t.read_only
        ]
        writes = [
            (i, b)
            for i, b in enumerate(tool_uses)
            if (t := self.tools.get(str(b.get("name")))) is not None and not t.read_only
        ]
        await asyncio.gather(*(one(i, b) for i, b in read_only))
        for i, b in writes:
            await one(i, b)
        self.state.pending_tool_uses = []
        return [r for r in results if r is not None]

    def _remember_passages(self, output: ToolOutput) -> None:
        if isinstance(output.content, list):
            for block in output.content:
                if block.get("type") == "search_result":
                    parsed = parse_source(str(block.get("source", "")))
                    text = " ".join(str(c.get("text", "")) for c in block.get("content", []))
                    if parsed:
                        self.state.passages.setdefault(parsed[1], text)
        else:
            for match in re.finditer(
                r'<book_text pages="(\d+)-(\d+)"[^>]*>\n(.*?)\n</book_text>', output.content, re.S
            ):
                self.state.passages.setdefault(int(match.group(1)), match.group(3))


def cancelled_results(tool_uses: list[dict[str, Any]], done_ids: set[str]) -> list[dict[str, Any]]:
    """``is_error`` results for tool calls a Stop left without one (keeps history valid)."""
    return [
        {
            "type": "tool_result",
            "tool_use_id": b["id"],
            "content": "Stopped by the reader before this ran.",
            "is_error": True,
        }
        for b in tool_uses
        if b["id"] not in done_ids
    ]


def summarise_request(request: TurnRequest) -> dict[str, Any]:
    """What the event log keeps of a request: shape, not the whole book text."""
    last = request.messages[-1] if request.messages else {}
    last_text = ""
    for block in last.get("content", []) if isinstance(last.get("content"), list) else []:
        if block.get("type") == "text":
            last_text = str(block.get("text", ""))[:300]
    return {
        "model": request.model,
        "messages": len(request.messages),
        "tools": [t.get("name") for t in request.tools],
        "tool_choice": request.tool_choice,
        "system_chars": sum(len(json.dumps(b)) for b in request.system),
        "max_tokens": request.max_tokens,
        "last_user_text": last_text,
    }
