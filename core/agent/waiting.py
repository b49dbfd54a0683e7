"""While a local model reads its prompt: what the reader is told, and what the model was given.

A local server sends its HTTP headers at once and its first stream event only after reading the
whole prompt (about 33 tokens a second on two cores: 30 s per 1,000 tokens). That wait is not a
dead connection (the provider's idle limit starts after the first event); the reader is told
what the model is reading, and for how long so far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from core.agent.types import Message, Passage, Passages, UserMessage

FIRST_NOTICE_S = 2.0  # a turn whose first word comes sooner says nothing
EVERY_S = 15.0  # then a line every this many seconds


def given_passages(messages: Iterable[Message]) -> tuple[Passage, ...]:
    """Every passage of the book a request puts in front of the model, in order: those a
    strategy put into the question and those the tools returned."""
    out: list[Passage] = []
    for message in messages:
        if not isinstance(message, UserMessage):
            continue
        for part in message.parts:
            if isinstance(part, Passages):
                out.extend(part.passages)
        for result in message.results:
            out.extend(result.passages)
    return tuple(out)


def reading_notice(passages: int, seconds: float, progress: float | None = None) -> str:
    """ "The model is reading 6 passages… (20 s so far)"."""
    what = (
        f"{passages} passage{'s' if passages != 1 else ''} from the book"
        if passages
        else "your question"
    )
    done = f", {progress:.0%} read" if progress is not None else ""
    so_far = f" ({seconds:.0f} s so far{done})" if seconds >= 5 else ""
    return f"The model is reading {what}…{so_far}"


class ReadingWatch:
    """Says "the model is reading…" when a turn's first event is slow to come, then every
    ``EVERY_S`` until it comes. Runs on the caller's event loop (timers, no task)."""

    def __init__(
        self,
        emit: Callable[[str], None],
        passages: int,
        *,
        first_s: float | None = None,
        every_s: float | None = None,
    ) -> None:
        self._emit = emit
        self._passages = passages
        first_s = FIRST_NOTICE_S if first_s is None else first_s
        self._every_s = EVERY_S if every_s is None else every_s
        self._loop = asyncio.get_running_loop()
        self._started = self._loop.time()
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(first_s, self._tick)

    def _tick(self) -> None:
        seconds = self._loop.time() - self._started
        self._emit(reading_notice(self._passages, seconds))
        self._handle = self._loop.call_later(self._every_s, self._tick)

    def arrived(self) -> None:
        """The first event came (or the turn ended): no more lines."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
