"""Passages mode: no model at all. It runs through the same loop as a model would: first
turn, it calls ``search_book`` with the question (and the start of the selection); second
turn, it answers with the best passages quoted with their pages and chapter, labelled
clearly as matches and not as an AI answer. In each passage the sentence most likely to
answer (most of the question's words, then closest in meaning) comes first, highlighted,
and the passage around it is cut on whole sentences. Deterministic, instant, and useful
before anyone has an API key. It reads typed passages, never text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from core.agent.providers.answer_sentence import pick
from core.agent.providers.base import ProviderEvent, StreamCitation, StreamText
from core.agent.providers.passages_reply import (
    FOLD_LINE,
    Lead,
    lead_block,
    leads,
    whole_sentences,
)
from core.agent.types import (
    AssistantMessage,
    CitationRef,
    HiddenAfter,
    Passage,
    Passages,
    Question,
    StopReason,
    TextPart,
    ToolCall,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
)
from core.labels import pages_label
from core.search.sentences import paragraphs

HEADER = (
    "**From the book** — no AI model is connected, so this is not an AI answer: the "
    "sentences of the book most likely to answer your question, with their pages."
)
PASSAGES_LINE = "the closest matches, each with the sentence most likely to answer first, in bold:"
TAIL = "Connect Claude or a local model in Settings to get real answers."
QUOTE_CHARS = 450
CONTEXT_CHARS = 3000  # at most, whole sentences around the best one
REPLY_CHARS = 11_000  # the passages of a reply: the chat shows 12,000 before "Show all"
LEAN = (3.0, 2.0)  # room of the first two passages against the others' (1 each)
PAGE_LINE = 90  # a passage's line of pages and chapter, and its Markdown
SHOWN = 6  # passages in a reply (tests/bench/eval_passages.py: 5 -> 6 shows the answer more)
ASKED = 8  # asked of search: one continuing a better one joins it, the next takes its place
OVERLAP_MIN, OVERLAP_MAX = 40, 400  # characters a chunk repeats of the one before it
CHAPTER_MARK = " — "  # a passage's title: "Book, p. 3 — Chapter title" (core.agent.tools)
_TERM_STRIP = ".,;:!?\"'“”’"


def query_for(question: Question) -> str:
    """The reader's words plus the start of any selection (not a quick action's template:
    its instructions are not words of the book)."""
    words = question.text.split()
    if question.selection is not None:
        words += question.selection.text.split()[:40]
    return " ".join(words)[:500]


def excerpt(text: str, terms: list[str]) -> tuple[str, bool, bool]:
    """About QUOTE_CHARS of ``text`` around the first query term: (quote, cut at the start,
    cut at the end). The quote itself is exact text of the passage."""
    text = " ".join(text.split())
    if len(text) <= QUOTE_CHARS:
        return text, False, False
    lowered = text.lower()
    hits = [i for i in (lowered.find(t) for t in terms if len(t) > 3) if i >= 0]
    centre = min(hits) if hits else 0
    start = max(0, centre - QUOTE_CHARS // 3)
    if start:
        sentence = text.rfind(". ", 0, start + 1)
        start = (
            sentence + 2
            if sentence >= 0 and start - sentence < QUOTE_CHARS // 3
            else text.find(" ", start) + 1
        )
    end = min(len(text), start + QUOTE_CHARS)
    if end < len(text):
        stop = text.rfind(". ", start, end)
        end = stop + 1 if stop > start + QUOTE_CHARS // 2 else text.rfind(" ", start, end)
    return text[start:end].strip(), start > 0, end < len(text)


@dataclass(frozen=True)
class Shown:
    """One passage as passages mode shows it: the sentence most likely to answer, and the
    whole sentences around it (exact text of the passage, spaces folded)."""

    answer: str
    context: str
    cut_start: bool
    cut_end: bool


def _folded(text: str) -> str:
    """``text`` with spaces folded in each paragraph, paragraphs kept (blank lines)."""
    return "\n\n".join(paragraphs(text))


def _continuation(before: str, after: str) -> int:
    """How many characters of ``after`` (spaces folded) repeat the end of ``before``: a
    chunk starts with the tail of the one before it. 0 when ``after`` does not continue
    ``before``."""
    for size in range(min(len(before), len(after), OVERLAP_MAX), OVERLAP_MIN - 1, -1):
        if before.endswith(after[:size]):
            return size
    return 0


def _printed_span(first: str, last: str) -> str:
    """ "pp. 40–42 in print" from the printed pages of two passages that continue each
    other ("" when either has none)."""
    if not first or not last:
        return ""
    start = first.split()[1].split("–")[0]
    end = last.split()[1].split("–")[-1]
    return f"p. {start} in print" if start == end else f"pp. {start}–{end} in print"


def join(first: Passage, second: Passage) -> Passage | None:
    """One passage of two that continue each other (``second`` goes on where ``first``
    ends, or holds it whole), or None when they do not."""
    if first.book_id != second.book_id:
        return None
    a, b = _folded(first.text), _folded(second.text)
    if b in a:
        return first
    if a in b:
        return second
    for head, tail in ((first, second), (second, first)):
        x, y = _folded(head.text), _folded(tail.text)
        if head.last_page <= tail.first_page <= head.last_page + 1:
            size = _continuation(x, y)
            if size:
                base, _, chapter = head.title.partition(CHAPTER_MARK)
                printed = _printed_span(head.printed, tail.printed)
                title = f"{base.rpartition(', p')[0] or base}, "
                title += pages_label(head.first_page, tail.last_page)
                title += (f" ({printed})" if printed else "") + (
                    f"{CHAPTER_MARK}{chapter}" if chapter else ""
                )
                return Passage(
                    head.book_id,
                    head.first_page,
                    tail.last_page,
                    x + y[size:],
                    title,
                    printed=printed,
                )
    return None


def merge_continuing(passages: list[Passage], chars: int = CONTEXT_CHARS) -> list[Passage]:
    """The passages in their order, where one that continues (or repeats) a better one is
    joined to it instead of taking a place of its own, when the two together are at most
    ``chars`` long (a passage is shown whole up to about that: a longer join would hide
    some of what each showed alone)."""
    out: list[Passage] = []
    for p in passages:
        for i, kept in enumerate(out):
            joined = join(kept, p)
            if joined is not None and (joined in (kept, p) or len(joined.text) <= chars):
                out[i] = joined
                break
        else:
            out.append(p)
    return out


def present(text: str, query: str, chars: int = CONTEXT_CHARS) -> Shown:
    """The best sentence of ``text`` for ``query`` and about ``chars`` of whole sentences
    around it (the whole passage when it is shorter)."""
    parts = whole_sentences(text)
    (span,) = pick([parts], query)
    return around(*together(parts, span), chars)


def together(parts: list[str], span: tuple[int, int]) -> tuple[list[str], int]:
    """``parts`` with the answering sentences (``span``: first, how many) made one, and its
    index."""
    first, size = span
    if size <= 1 or not parts:
        return parts, first
    return [*parts[:first], " ".join(parts[first : first + size]), *parts[first + size :]], first


def around(parts: list[str], best: int, chars: int) -> Shown:
    """Sentence ``best`` of ``parts`` and the whole sentences around it, at most about
    ``chars`` characters in all (at least the sentence itself)."""
    if not parts:
        return Shown("", "", False, False)
    first = last = best
    size = len(parts[best])
    while True:
        grown = False
        if last + 1 < len(parts) and size + len(parts[last + 1]) + 1 <= chars:
            last += 1
            size += len(parts[last]) + 1
            grown = True
        if first > 0 and size + len(parts[first - 1]) + 1 <= chars:
            first -= 1
            size += len(parts[first]) + 1
            grown = True
        if not grown:
            break
    shown = [*parts[first:best], f"**{parts[best]}**", *parts[best + 1 : last + 1]]
    return Shown(parts[best], " ".join(shown), first > 0, last < len(parts) - 1)


def shares(
    sizes: list[int], room: int, most: int = CONTEXT_CHARS, lean: tuple[float, ...] = ()
) -> list[int]:
    """Characters for each passage out of ``room``, in proportion to ``lean`` (1 each when not
    given): a passage shorter than its share is shown whole and leaves the rest to the
    others (at most ``most`` each)."""
    lean = tuple(lean[i] if i < len(lean) else 1.0 for i in range(len(sizes)))
    out = [0] * len(sizes)
    left = max(0, room)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i] / lean[i])
    for n, i in enumerate(order):
        share = left * lean[i] / sum(lean[j] for j in order[n:])
        out[i] = int(min(sizes[i], most, share))
        left -= out[i]
    return out


def choose(
    passages: list[Passage],
    query: str,
    count: int = SHOWN,
    room: int = REPLY_CHARS,
    *,
    deep: bool = True,
) -> list[tuple[Passage, Shown]]:
    """The passages a reply shows and what of each: those continuing a better one joined to
    it, the first ``count``, each around its best sentence, all of them (the best sentences
    shown first too, and a line of pages each) in about ``room`` characters, so the chat
    shows the whole reply without a "Show all". ``deep=False``: the answering sentences
    chosen without the sentence encoder (tests/bench/bench_passages.py compares)."""
    chosen = merge_continuing(passages)[:count]
    spans = [whole_sentences(p.text) for p in chosen]
    split, best = [], []
    for parts, span in zip(spans, pick(spans, query, deep=deep), strict=True):
        joined, at = together(parts, span)
        split.append(joined)
        best.append(at)
    fixed = sum(len(parts[b]) + PAGE_LINE for parts, b in zip(split, best, strict=True) if parts)
    sizes = [len(" ".join(parts)) for parts in split]
    given = shares(sizes, room - fixed, lean=LEAN)
    return [
        (p, around(parts, b, chars))
        for p, parts, b, chars in zip(chosen, split, best, given, strict=True)
    ]


def _after_lead(shown: Shown) -> str:
    """The quoted lines under a passage's best sentence: the whole sentences around it, the
    best one in bold where it stands; when they start with it, only what follows (it is
    just above, not twice in a row)."""
    lead = f"**{shown.answer}**"
    context, cut_start = shown.context, shown.cut_start
    if context.startswith(lead):
        context, cut_start = context[len(lead) :].strip(), False
    if not context:
        return ""
    return f">\n> {'… ' if cut_start else ''}{context}{' …' if shown.cut_end else ''}\n"


def _hidden_text(part: HiddenAfter) -> str:
    return f"Passages after page {part.page}, beyond where you have read, are not shown."


def _reply_parts(
    passages: list[Passage], query: str, count: int
) -> tuple[list[tuple[Passage, Shown]], list[Lead]]:
    """The passages shown and the sentences that lead the reply (``passages_reply``)."""
    chosen = choose(passages, query, count)
    return chosen, leads([(p, shown.answer) for p, shown in chosen], query)


class PassagesProvider:
    name = "passages"
    model = "passages"
    where = "passages mode"
    supports_citations = True
    bills_tokens = False

    def __init__(self, top_k: int = ASKED, shown: int = SHOWN) -> None:
        self.shown = shown
        self.top_k = top_k
        self._counter = 0

    async def aclose(self) -> None:
        return None

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        last = request.messages[-1] if request.messages else UserMessage(())
        results = last.results if isinstance(last, UserMessage) else ()
        question = next(
            (
                m.question
                for m in reversed(request.messages)
                if isinstance(m, UserMessage) and m.question is not None
            ),
            None,
        ) or Question("")
        if not results and any(t.name == "search_book" for t in request.tools):
            self._counter += 1
            call = ToolCall(
                f"passages_{self._counter}",
                "search_book",
                {"query": query_for(question), "top_k": self.top_k},
            )
            yield TurnResult(AssistantMessage((call,)), StopReason.TOOL_USE, Usage())
            return
        passages: list[Passage] = [p for r in results for p in r.passages]
        hidden = [p for r in results for p in r.parts if isinstance(p, HiddenAfter)]
        notes = [n for r in results for n in r.notes]
        if not passages and isinstance(last, UserMessage):
            # the always-retrieve strategy puts the passages straight into the question
            passages = [
                p for part in last.parts if isinstance(part, Passages) for p in part.passages
            ]
        query = query_for(question)
        parts: list[str] = []
        citations: list[CitationRef] = []
        if passages:
            # the encoder reads up to 24 sentences (about 0.25 s of CPU): not on the window's loop
            chosen, first = await asyncio.to_thread(_reply_parts, passages, query, self.shown)
            block, cited = lead_block(first)
            parts.append(f"{HEADER}\n\n{block}{FOLD_LINE} — {PASSAGES_LINE}\n\n")
            yield StreamText(parts[-1])
            for ref in cited:
                citations.append(ref)
                yield StreamCitation(ref)
            for p, shown in chosen:
                quote = shown.answer or excerpt(p.text, [])[0]
                chapter = p.title.partition(CHAPTER_MARK)[2]
                where = p.label + (f" ({p.printed})" if p.printed else "")
                where += f" · {chapter}" if chapter else ""
                parts.append(f"{where}\n\n> **{quote}**\n{_after_lead(shown)}\n")
                yield StreamText(parts[-1])
                ref = CitationRef(p.book_id, p.first_page, p.last_page, quote)
                if all((c.first_page, c.last_page) != (p.first_page, p.last_page) for c in cited):
                    citations.append(ref)
                    yield StreamCitation(ref)
            if hidden:
                parts.append(f"*{_hidden_text(hidden[0])}*\n\n")
                yield StreamText(parts[-1])
            parts.append(TAIL)
            yield StreamText(TAIL)
        else:
            message = (
                " ".join(n.strip() for n in notes if n.strip())
                or "No passage matches your question."
            )
            if hidden:
                message += " " + _hidden_text(hidden[0])
            parts.append(f"{message}\n\nTry other words, or {TAIL[0].lower()}{TAIL[1:]}")
            yield StreamText(parts[-1])
        text = "".join(parts)
        yield TurnResult(
            AssistantMessage((TextPart(text, tuple(citations)),)), StopReason.END_TURN, Usage()
        )


__all__ = ["HEADER", "PassagesProvider", "Shown", "excerpt", "present", "query_for"]
