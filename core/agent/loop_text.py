"""The agent loop's visible text: streamed text checked for spoilers on its way to the reader,
doubtful sentences verified side by side (``spoiler_verify.PendingSegments``), a looping
answer cut, and page citations kept within the bound."""

from __future__ import annotations

from core.agent.answer import marker
from core.agent.context import citable
from core.agent.events import Citation, SpoilerHidden, TextDelta, UsageReport
from core.agent.grounding import LABEL, claim_before, claims, held_by, supporting
from core.agent.loop_state import RunSink, RunState
from core.agent.repetition import RepetitionCheck
from core.agent.spoiler_verify import (
    CONCURRENCY,
    PendingSegments,
    SupportCheck,
    SupportVerifier,
)
from core.agent.spoilers import Segment, SpoilerGuard
from core.agent.tools import ToolContext
from core.agent.types import (
    AssistantMessage,
    CitationRef,
    StopReason,
    TextPart,
    TurnResult,
    Usage,
    Withheld,
)


class ShownText:
    """What the reader is shown of one run, sentence by sentence, in order."""

    def __init__(
        self,
        *,
        state: RunState,
        sink: RunSink,
        ctx: ToolContext,
        guard: SpoilerGuard | None,
        verifier: SupportVerifier | None,
        watch_loops: bool,
        ground_hidden: bool = False,
        concurrency: int = CONCURRENCY,
        timeout: float | None = None,
    ) -> None:
        self.state = state
        self.sink = sink
        self.ctx = ctx
        self.guard = guard
        self.verifier = verifier
        self.watch_loops = watch_loops  # a local model's text is watched for a loop
        # a held-back sentence no passage the model was given says is marked "ungrounded"
        # (invented: a small local model's), never as naming what the book tells later
        self.ground_hidden = ground_hidden
        self.pending = PendingSegments(
            verifier, self._out, concurrency=concurrency, timeout=timeout
        )
        self.repeats: RepetitionCheck | None = None
        self._turn_texts = 0
        self._turn_withheld = 0
        self._turn_pieces: list[tuple[str, str]] = []
        self._turn_deltas = 0

    def begin_turn(self, visible: bool) -> None:
        """Start a turn: watch a visible turn's text for a loop when it is a local model's
        (Claude does not fall into one; passages mode quotes the book)."""
        self.repeats = RepetitionCheck() if visible and self.watch_loops else None
        self._turn_texts = len(self.state.texts)
        self._turn_withheld = len(self.state.withheld)
        self._turn_pieces = []  # (the model's text, what was shown) in order
        self._turn_deltas = 0

    def retract_turn(self) -> None:
        """The turn's text was not an answer (a tool call written as text): out of the answer."""
        del self.state.texts[self._turn_texts :]
        del self.state.withheld[self._turn_withheld :]

    def looping(self, text: str) -> bool:
        """Whether the turn's text, with ``text`` added, has fallen into a loop."""
        return self.repeats is not None and self.repeats.feed(text)

    async def show(self, text: str | None, step: int, *, verify: bool = True) -> None:
        """Streamed text on its way to the reader. With the spoiler check, sentences go out
        once checked, the sentence being written in pieces that each pass the check on the
        sentence so far (``SpoilerGuard.prefix``); the sentences after a doubtful one wait for
        its verdict; a sentence that names something from after the bound is held back (what
        was not shown of it) and a marker stands in its place. ``None`` ends the turn: the
        rest is checked and every verdict awaited."""
        if text is not None:
            self._turn_deltas += 1
        if self.guard is None:
            if text:
                self.state.texts.append(text)
                self._turn_pieces.append((text, text))
                self.sink.emit(TextDelta(text, step))
            return
        if text is None:
            segments = self.guard.flush()
        else:
            segments = self.guard.feed(text) + self.guard.release()
            piece = self.guard.prefix()  # the sentence being written, checked so far
            if piece is not None:
                segments.append(piece)
        for segment in segments:
            self.pending.push(segment, step, verify=verify)
        if text is None:
            await self.pending.drain()

    def _out(self, segment: Segment, check: SupportCheck | None, step: int) -> None:
        """A decided segment, out to the reader (shown, or held back behind a marker); a
        verification's tokens count in the answer's usage and it is logged like any call."""
        if check is not None and check.request is not None:
            if check.result is not None:
                self.state.usage = self.state.usage + check.result.usage
                self.sink.emit(UsageReport(check.result.usage, step))
            if check.result is not None or check.error:
                self.sink.invocation(step, check.request, check.result, check.error, check.ms)
        rest = segment.rest  # (a piece of it may have been shown while it was written)
        if not segment.hidden or not rest.strip():
            if rest:
                self.state.texts.append(rest)
                self._turn_pieces.append((rest, rest))
                self.sink.emit(TextDelta(rest, step))
            return
        reason = segment.kind
        if self.ground_hidden and held_by(segment.text, self.state.passages) is None:
            reason = "ungrounded"
        item = Withheld(
            len(self.state.withheld) + 1,
            rest,
            tuple((t.term, t.first_page) for t in segment.terms),
            self.guard.read_to or 0 if self.guard is not None else 0,
            reason,
        )
        self.state.withheld.append(item)
        self.state.texts.append(marker(item.index))
        self._turn_pieces.append((rest, marker(item.index)))
        self.sink.emit(SpoilerHidden(item, step))

    async def cut_loop(self, step: int) -> TurnResult:
        """The turn's text cut where the loop began (plus one copy): the stream is closed,
        the answer keeps what came before, and the run ends marked (``REPEATING``)."""
        check = self.repeats
        assert check is not None and check.cut is not None
        await self.pending.drain()  # what was already written is decided before the cut
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
                await self.show(None, step, verify=False)
        state.texts[-1] = state.texts[-1].rstrip()
        state.repeating = True
        usage = Usage(output_tokens=self._turn_deltas)  # the server's count never came
        state.usage = state.usage + usage
        self.sink.emit(UsageReport(usage, step))
        return TurnResult(
            AssistantMessage((TextPart(check.text[:cut].rstrip()),)), StopReason.END_TURN, usage
        )

    async def flush(self) -> None:
        """A run that ends early (Stop, a failure) still shows what was held back, checked
        (lexically: verifications still running are cancelled, no model call after a Stop)."""
        if self.guard is None or self.state.repeating:
            return
        self.pending.abandon()
        if self.guard.pending:
            await self.show(None, self.state.step, verify=False)

    # citations -------------------------------------------------------------------------

    def cite(self, ref: CitationRef, step: int) -> None:
        if not citable(ref.first_page, ref.last_page, self.ctx.book.page_count, self.ctx.bound):
            return  # past the bound or the book: refused whole, never clamped
        if ref not in self.state.citations:
            self.state.citations.append(ref)
            self.sink.emit(Citation(ref, step))

    def label_citations(self, asked: str = "") -> None:
        """For servers without citations: ``[p. N]`` labels in the answer become citations,
        only when a passage the model was given holds that page and says what the sentence
        before the label says; the citation quotes that sentence of the passage (so the reader
        can find it). A label to a page it never got, or one its passage does not bear out,
        is never a source."""
        book = self.ctx.book
        seen = {(c.first_page, c.last_page) for c in self.state.citations}
        answer = self.state.answer
        for match in LABEL.finditer(answer):
            first = int(match.group(1))
            last = int(match.group(2) or first)
            if (first, last) in seen or not citable(first, last, book.page_count, self.ctx.bound):
                continue  # past the bound or the book: refused whole, never clamped
            quote = held_by(claim_before(answer, match.start()), self.state.passages, first, last)
            if quote is None:
                continue
            seen.add((first, last))
            self.cite(CitationRef(book.id, first, last, quote), self.state.step)
        if asked:
            self.attach_pages(asked, seen)

    def attach_pages(self, asked: str, seen: set[tuple[int, int]]) -> None:
        """A sentence of the answer with no page label borne out (none, or one no passage
        says) gets the page of the given passage that says it, checked against that passage's
        text (``grounding.supporting``): a small model answers right but seldom labels its
        page. Never a page the model was not given."""
        book = self.ctx.book
        for claim in claims(self.state.answer, set(seen)):
            found = supporting(claim, self.state.passages, asked)
            if found is None:
                continue
            p, quote = found
            if (p.first_page, p.last_page) in seen:
                continue
            seen.add((p.first_page, p.last_page))
            self.cite(CitationRef(book.id, p.first_page, p.last_page, quote), self.state.step)
