"""The agent loop: model turns, tool calls and limits for one run, with the run's state.

One loop for every strategy. A strategy only says whether tools are offered and may prepare
the messages first (``strategies.py``); the loop owns the state, decides what happens after
each turn from one table (``STOP_TABLE``), runs tools (read-only ones side by side on the
database threads), enforces the limits, and reports everything through its ``RunSink``.
It never retries a model call: the provider does (``providers/``).

The run's data (the stop table, ``RunState``, the ``RunSink``) is in ``loop_state``, the
visible text (the spoiler check, verifications side by side, a looping answer cut, citations)
in ``loop_text``, the tool calls in ``loop_tools``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from core.agent.answer import for_model, marker
from core.agent.events import Notice, TurnStarted, UsageReport
from core.agent.loop_state import (
    LIMIT_NOTES,
    REPEATING,
    REPETITION_STOP,
    STOP_TABLE,
    STOPPED_RESULT,
    Next,
    RunSink,
    RunState,
    StopRule,
    Strategy,
    close_stream,
    summarise_request,
)
from core.agent.loop_text import ShownText
from core.agent.loop_tools import ToolRunner
from core.agent.providers.base import (
    ChatProvider,
    StreamCitation,
    StreamRetry,
    StreamText,
)
from core.agent.spoiler_verify import SupportVerifier
from core.agent.spoilers import SpoilerGuard
from core.agent.text_calls import text_tool_calls
from core.agent.tools import ToolBox, ToolContext, ToolOutput
from core.agent.types import (
    AssistantMessage,
    Instruction,
    Message,
    StopReason,
    TextPart,
    ToolCall,
    ToolResult,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from core.agent.waiting import ReadingWatch, given_passages
from core.errors import LLMCode, LLMError
from core.prompts import load_prompt
from core.settings import AgentLimits

__all__ = [
    "LIMIT_NOTES",
    "REPEATING",
    "REPETITION_STOP",
    "STOPPED_RESULT",
    "STOP_TABLE",
    "AgentLoop",
    "Next",
    "RunSink",
    "RunState",
    "StopRule",
    "Strategy",
    "summarise_request",
]


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
        local_reading: str = "speed",
    ) -> None:
        self.provider = provider
        self.local_reading = local_reading  # a local model's passages: "speed" or "breadth"
        self.guard = guard
        self.verifier = verifier  # a model's check of doubtful sentences (spoiler_verify)
        self.tools = tools
        self.ctx = ctx
        self.limits = limits
        self.sink = sink
        self.model = model
        self.system = system
        self.state = RunState()
        # a local model reads its prompt slowly before the first word: its run may last longer
        self.deadline_s = limits.local_deadline_s if provider.name == "local" else limits.deadline_s
        self.deadline = self.state.started + self.deadline_s
        self.messages: list[Message] = []
        self._shorter: Callable[[], list[Message]] | None = None
        self._history_len = 0
        self.text = ShownText(
            state=self.state,
            sink=sink,
            ctx=ctx,
            guard=guard,
            verifier=verifier,
            watch_loops=provider.name == "local",
            ground_hidden=provider.name == "local",
        )
        self.runner = ToolRunner(
            state=self.state, sink=sink, tools=tools, ctx=ctx, limits=limits, guard=guard
        )

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
            if tools and not result.message.calls and self.provider.name == "local":
                result = self._written_calls(result, tools)
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

    def _written_calls(self, result: TurnResult, tools: tuple[Any, ...]) -> TurnResult:
        """A reply that writes its tool call as text (``core.agent.text_calls``) is the call:
        its text leaves the answer."""
        offered = {t.name for t in tools}
        calls = text_tool_calls(result.message.text, offered, self.state.step)
        if not calls:
            return result
        self.text.retract_turn()
        return TurnResult(AssistantMessage(calls), StopReason.TOOL_USE, result.usage)

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
            self.text.begin_turn(visible)
            stream = self.provider.stream_turn(request)
            watch = self._reading_watch(request, step)
            try:
                remaining = max(1.0, self.deadline - time.monotonic()) + grace
                async with asyncio.timeout(remaining):
                    async for event in stream:
                        if watch is not None:
                            watch.arrived()
                        if isinstance(event, StreamText):
                            if visible:
                                shown = True
                                await self.text.show(event.text, step)
                                if self.text.looping(event.text):
                                    await close_stream(stream)  # stop the model now
                                    result = await self.text.cut_loop(step)
                                    self.sink.invocation(
                                        step,
                                        request,
                                        result,
                                        "",
                                        (time.perf_counter() - started) * 1000,
                                    )
                                    return result
                        elif isinstance(event, StreamCitation):
                            self.text.cite(event.citation, step)
                        elif isinstance(event, StreamRetry):
                            self.sink.emit(Notice(event.notice, step))
                        else:
                            if visible:
                                await self.text.show(None, step)  # the end of the turn: the rest
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
                    f"The answer took longer than the limit of {self.deadline_s:.0f} seconds.",
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
                if watch is not None:
                    watch.arrived()
                await close_stream(stream)

    def _reading_watch(self, request: TurnRequest, step: int) -> ReadingWatch | None:
        """A local model's turn says what the model is reading while its first word is slow
        to come (``core.agent.waiting``)."""
        if self.provider.name != "local":
            return None
        passages = len(given_passages(request.messages))
        return ReadingWatch(lambda text: self.sink.emit(Notice(text, step)), passages)

    # the visible text --------------------------------------------------------------------

    async def flush_text(self) -> None:
        """A run that ends early (Stop, a failure) still shows what was held back, checked
        (lexically: no model call after a Stop)."""
        await self.text.flush()

    def label_citations(self, asked: str = "") -> None:
        """For servers without citations: ``[p. N]`` labels in the answer become citations,
        and a sentence a given passage says gets that passage's page (``asked``: the
        question, whose words a claim must add to)."""
        self.text.label_citations(asked)

    # tools -----------------------------------------------------------------------------

    async def run_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run one tool outside the model's turns (a strategy's own search)."""
        return (await self.run_tool_calls([(name, arguments)]))[0]

    async def run_tool_calls(self, calls: list[tuple[str, Mapping[str, Any]]]) -> list[ToolOutput]:
        """Run tools outside the model's turns, read-only ones side by side (a strategy's
        searches); outputs come back in the same order."""
        return await self.runner.run_tool_calls(calls)

    async def run_tools(self, calls: tuple[ToolCall, ...]) -> tuple[ToolResult, ...]:
        """Run the tool calls of one reply; results come back in the same order."""
        return await self.runner.run_tools(calls)

    def unanswered_results(self) -> UserMessage | None:
        """``is_error`` results for tool calls a Stop or a failure left without one."""
        return self.runner.unanswered_results()
