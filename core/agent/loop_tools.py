"""The agent loop's tool calls: run within the limits, read-only ones side by side on the
database threads, results kept and stored in the order the model asked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from core.agent.events import ToolCallRecord, ToolFinished, ToolStarted
from core.agent.loop_state import STOPPED_RESULT, RunSink, RunState
from core.agent.spoilers import SpoilerGuard
from core.agent.tools import ToolBox, ToolContext, ToolOutput, error_output
from core.agent.types import Note, ToolCall, ToolResult, UserMessage
from core.settings import AgentLimits


class ToolRunner:
    """Runs a run's tool calls and records them in its ``RunState``."""

    def __init__(
        self,
        *,
        state: RunState,
        sink: RunSink,
        tools: ToolBox,
        ctx: ToolContext,
        limits: AgentLimits,
        guard: SpoilerGuard | None,
    ) -> None:
        self.state = state
        self.sink = sink
        self.tools = tools
        self.ctx = ctx
        self.limits = limits
        self.guard = guard

    async def run_tool_calls(self, calls: list[tuple[str, Mapping[str, Any]]]) -> list[ToolOutput]:
        """Run tools outside the model's turns, read-only ones side by side (a strategy's
        searches); outputs come back in the same order."""
        step = self.state.step
        typed = tuple(
            ToolCall(f"{name}_{step}" + (f"_{i}" if i else ""), name, dict(arguments))
            for i, (name, arguments) in enumerate(calls)
        )
        return await self.run_calls(typed)

    async def run_tools(self, calls: tuple[ToolCall, ...]) -> tuple[ToolResult, ...]:
        """Run the tool calls of one reply; results come back in the same order."""
        outputs = await self.run_calls(calls)
        return tuple(
            ToolResult(call.id, out.parts, out.is_error)
            for call, out in zip(calls, outputs, strict=True)
        )

    async def run_calls(self, calls: tuple[ToolCall, ...]) -> list[ToolOutput]:
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
