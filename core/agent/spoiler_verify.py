"""The semantic layer's optional model check (issue 23): a short verification call for the
sentences the lexical support test finds doubtful.

The lexical test (``SpoilerGuard.check``) decides alone when no model is connected or the
setting ``spoiler_verify`` is off. With a model, a doubtful sentence (a later passage matches
it somewhat better than the pages read, not clearly enough to hold it back) is sent with the
passages within the bound that best match it; the model answers SUPPORTED or UNSUPPORTED.
The call's tokens count in the answer's usage (the cost meter) and it is written to the event
log like any model call. Any failure, a reply that is no verdict, or no verdict within
``TIMEOUT`` seconds of the sentence's end keeps the lexical decision: a verification never
loses or stalls an answer.

The verifications of one answer run side by side (``PendingSegments``): a doubtful sentence's
call starts as soon as the sentence is complete (at most ``CONCURRENCY`` at a time), the
stream goes on meanwhile, and the sentences after it wait only for its verdict (the text keeps
its order). N doubtful sentences cost about one call's latency, not N.

A sentence held back only on weak evidence (a motif, a phrase or a pair of ordinary words that
the book uses first after the bound) is verified too: SUPPORTED shows it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from core.agent.providers.base import ChatProvider, StreamText
from core.agent.spoilers import Segment, SpoilerGuard
from core.agent.types import Question, TurnRequest, TurnResult, UserMessage
from core.prompts import load_prompt

log = logging.getLogger(__name__)

TIMEOUT = 10.0  # seconds from a sentence's end to its verdict; then the lexical decision stands
CONCURRENCY = 4  # verification calls of one answer at a time
MAX_TOKENS = 8
PASSAGE_CHARS = 1500  # of each passage sent


@dataclass(frozen=True)
class SupportCheck:
    supported: bool | None  # None: no verdict (a failure, a timeout): the lexical decision stands
    request: TurnRequest | None = None
    result: TurnResult | None = None
    ms: float = 0.0
    error: str = ""  # why there is no verdict: "timeout", or the failure


def verification_prompt(guard: SpoilerGuard, sentence: str, question: str) -> tuple[str, str]:
    """The system prompt and the message of one verification: the sentence, the question and
    the passages within the bound that best match the sentence (the check's own search, so it
    has support to show whatever the strategy sent the model)."""
    passages = guard.support_passages(sentence)
    text = "\n\n".join(f"<passage>{p[:PASSAGE_CHARS]}</passage>" for p in passages)
    prompt = load_prompt(
        "spoiler_verify",
        passages=text or "(none match)",
        question=question or "(no question)",
        sentence=sentence.strip(),
    )
    return load_prompt("spoiler_verify_system"), prompt


class SupportVerifier:
    """One per answer: asks the answer's own model whether a doubtful sentence is supported."""

    def __init__(self, provider: ChatProvider, guard: SpoilerGuard, question: str) -> None:
        self.provider = provider
        self.guard = guard
        self.question = question
        self.calls = 0

    def request(self, sentence: str) -> TurnRequest:
        system, prompt = verification_prompt(self.guard, sentence, self.question)
        return TurnRequest(
            model=self.provider.model,
            system=system,
            messages=(UserMessage((Question(prompt),)),),
            max_tokens=MAX_TOKENS,
            tool_choice="none",
        )

    async def __call__(self, sentence: str, within: float = TIMEOUT) -> SupportCheck:
        request = self.request(sentence)
        self.calls += 1
        started = time.perf_counter()
        text: list[str] = []
        result: TurnResult | None = None
        try:
            async with asyncio.timeout(within):
                async for event in self.provider.stream_turn(request):
                    if isinstance(event, TurnResult):
                        result = event
                    elif isinstance(event, StreamText):
                        text.append(event.text)
        except Exception as exc:  # the lexical decision stands
            error = "timeout" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            log.info("support check failed (%s); the lexical decision stands", error)
            ms = (time.perf_counter() - started) * 1000
            return SupportCheck(None, request, result, ms, error)
        reply = "".join(text) or (result.message.text if result is not None else "")
        return SupportCheck(verdict(reply), request, result, (time.perf_counter() - started) * 1000)


def unsupported_verdict(reply: str) -> bool:
    """Whether a reply says UNSUPPORTED: its first word ("UNSUPPORTED", "**Unsupported.**",
    "Not supported"). Anything else, an echo of the question included, keeps the sentence."""
    words = [w.strip(".,:;!*_\"'`()[]") for w in reply.upper().split()[:2]]
    if not words:
        return False
    # "UN SUPPORTED": a small local model's spelling (tests/bench/real_model/RESULTS.md)
    return words[0] == "UNSUPPORTED" or words[:2] in (["NOT", "SUPPORTED"], ["UN", "SUPPORTED"])


def verdict(reply: str) -> bool | None:
    """True for SUPPORTED, False for UNSUPPORTED (``unsupported_verdict``), None for a reply
    that is neither (an echo of the question, an essay): then the lexical decision stands."""
    if unsupported_verdict(reply):
        return False
    first = reply.upper().split()[:1]
    return True if first and first[0].strip(".,:;!*_\"'`()[]") == "SUPPORTED" else None


def decide(segment: Segment, check: SupportCheck | None) -> Segment:
    """A doubtful segment after its verification: SUPPORTED shows it (a sentence held only on
    weak evidence too), UNSUPPORTED holds it ("unsupported" unless it was already held for a
    later name), no verdict keeps the lexical decision."""
    if check is None or check.supported is None:
        return segment
    if check.supported:
        return dataclasses.replace(segment, hidden=False, terms=())
    if segment.hidden:
        return segment
    return dataclasses.replace(segment, hidden=True, kind="unsupported")


class Verifies(Protocol):
    """A verification of one sentence (``SupportVerifier``), with a verdict due in ``within``
    seconds."""

    async def __call__(self, sentence: str, within: float = ...) -> SupportCheck: ...


# Where a decided segment goes: (the segment as decided, its verification if it had one, step).
Decided = Callable[[Segment, SupportCheck | None, int], None]


@dataclass
class _Entry:
    segment: Segment
    step: int
    task: asyncio.Task[SupportCheck] | None = None


class PendingSegments:
    """One answer's checked segments on their way out, in order. A doubtful segment's
    verification starts when it is pushed (at most ``concurrency`` calls at a time); the
    segments after it wait for its verdict, so the text keeps its order, while the stream goes
    on and later doubtful segments start their own calls. A verdict is due ``timeout`` seconds
    after its segment was pushed (a wait for a free slot counts); then the lexical decision
    stands. Decided segments go to ``out`` as soon as everything before them is decided."""

    def __init__(
        self,
        verifier: Verifies | None,
        out: Decided,
        *,
        concurrency: int = CONCURRENCY,
        timeout: float | None = None,
    ) -> None:
        self.verifier = verifier
        self.out = out
        self.timeout = TIMEOUT if timeout is None else timeout
        self._slots = asyncio.Semaphore(concurrency)
        self._queue: deque[_Entry] = deque()

    @property
    def waiting(self) -> bool:
        """Whether segments wait for a verdict."""
        return bool(self._queue)

    def push(self, segment: Segment, step: int, *, verify: bool = True) -> None:
        """A checked segment: out at once when nothing waits before it and it needs no
        verification; else queued (a doubtful one's verification starts now)."""
        entry = _Entry(segment, step)
        if segment.doubtful and verify and self.verifier is not None:
            entry.task = asyncio.ensure_future(self._verify(segment.text))
            entry.task.add_done_callback(lambda _task: self._release())
        self._queue.append(entry)
        self._release()

    async def drain(self) -> None:
        """Wait until every queued segment is decided and out."""
        while self._queue:
            task = self._queue[0].task
            if task is not None and not task.done():
                await asyncio.wait({task})
            self._release()

    def abandon(self) -> None:
        """Out now, without waiting (a Stop, a failure): verdicts already in are used, calls
        still running are cancelled and their segments keep the lexical decision."""
        queue, self._queue = self._queue, deque()
        for entry in queue:
            check = _result(entry.task)
            if entry.task is not None and not entry.task.done():
                entry.task.cancel()
            self._send(entry, check)

    async def _verify(self, sentence: str) -> SupportCheck:
        assert self.verifier is not None
        loop = asyncio.get_running_loop()
        due = loop.time() + self.timeout
        async with self._slots:
            remaining = due - loop.time()
            if remaining <= 0:  # waited its whole time for a free slot: no call
                return SupportCheck(None, error="timeout")
            return await self.verifier(sentence, within=remaining)

    def _release(self) -> None:
        while self._queue:
            entry = self._queue[0]
            if entry.task is not None and not entry.task.done():
                return
            self._queue.popleft()
            self._send(entry, _result(entry.task))

    def _send(self, entry: _Entry, check: SupportCheck | None) -> None:
        if entry.task is None:
            self.out(entry.segment, None, entry.step)
        else:
            self.out(decide(entry.segment, check), check, entry.step)


def _result(task: asyncio.Task[SupportCheck] | None) -> SupportCheck | None:
    if task is None or not task.done() or task.cancelled() or task.exception() is not None:
        return None
    return task.result()
