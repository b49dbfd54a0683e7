"""What reading aloud says, and where each piece is on its page (no Qt).

A page's stored text (ARCHITECTURE.md, "What a page's text holds") is cut into utterances,
one a sentence, with the splitter search uses (``core.search.sentences``: "Mr." and initials
do not end a sentence). Note references (``[5]``) are not spoken, an image's
``[Illustration: alt]`` is said as "Illustration: alt", a block quote's "> " is dropped. Each
utterance keeps its page and its character range in that page's text, and can map a place in
what is said back to the page (the engine reports words by their place in what it was given).

Long text never costs more than one window per utterance: a paragraph is read in windows of
``WINDOW`` characters, and a sentence longer than ``MAX_CHARS`` (a paragraph with no full
stop) is said in pieces cut at a comma or a space.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from core.search.sentences import sentences

MAX_CHARS = 600  # one utterance at most (about 40 s of speech): engines choke on more
WINDOW = 8_000  # characters of a paragraph split at once
_NOTE_REF = re.compile(r"\[[^\]\s]{1,4}\]")  # [5], [a], [*]: a note reference
_ILLUSTRATION = re.compile(r"\[Illustration: ([^\]]*)\]")
_QUOTE = re.compile(r"^(?:> ?)+", re.M)
_PARAGRAPH = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\S+")
_SPEAKABLE = re.compile(r"\w")


@dataclass(frozen=True)
class Utterance:
    """One thing said: ``text`` as spoken, from ``start`` to ``end`` of page ``page``'s
    stored text. ``marks`` pairs places in ``text`` with places in the page (ascending), so
    a word the engine reports can be marked where it is on the page."""

    page: int
    start: int
    end: int
    text: str
    kind: str = "text"  # or "illustration"
    marks: tuple[tuple[int, int], ...] = ()

    def page_offset(self, spoken: int) -> int:
        """The offset in the page's text of place ``spoken`` in ``text``."""
        if not self.marks:
            return self.start + spoken
        i = bisect.bisect_right(self.marks, (spoken, 1 << 62)) - 1
        said, at = self.marks[max(0, i)]
        return min(self.end, at + max(0, spoken - said))


def _spoken(original: str, base: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """``original`` (at ``base`` in its page) as said: spaces folded, note references and
    quote marks left out; with the marks from said places to page places."""
    cleaned = _QUOTE.sub(lambda m: " " * len(m.group(0)), original)
    cleaned = _NOTE_REF.sub(lambda m: " " * len(m.group(0)), cleaned)
    parts: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    for word in _WORD.finditer(cleaned):
        if parts:
            parts.append(" ")
            length += 1
        marks.append((length, base + word.start()))
        parts.append(word.group(0))
        length += len(word.group(0))
    return "".join(parts), tuple(marks)


def _pieces(text: str, limit: int = MAX_CHARS) -> Iterator[tuple[int, int]]:
    """(start, end) pieces of ``text`` of at most ``limit`` characters, cut after a comma,
    semicolon or dash where there is one in the second half, else at a space."""
    at = 0
    while len(text) - at > limit:
        window = text[at : at + limit]
        cut = max(window.rfind(", "), window.rfind("; "), window.rfind(" — "))
        if cut < limit // 2:
            cut = window.rfind(" ")
        cut = limit if cut <= 0 else cut + 1
        yield at, at + cut
        at += cut
        while at < len(text) and text[at].isspace():
            at += 1
    if at < len(text):
        yield at, len(text)


def _sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (one paragraph), read a window at a time."""
    at = 0
    while at < len(text):
        chunk = text[at : at + WINDOW]
        last = at + len(chunk) >= len(text)
        folded = " ".join(chunk.split())
        starts = [m.start() for m in _WORD.finditer(chunk)]
        folded_starts: list[int] = []
        n = 0
        for m in _WORD.finditer(chunk):
            folded_starts.append(n)
            n += len(m.group(0)) + 1

        def place(i: int, starts: list[int] = starts, fs: list[int] = folded_starts) -> int:
            k = max(0, bisect.bisect_right(fs, i) - 1)
            return starts[k] + (i - fs[k]) if starts else 0

        found = sentences(folded)
        cursor = 0
        spans: list[tuple[int, int]] = []
        for sentence in found:
            i = folded.find(sentence, cursor)
            if i < 0:
                continue
            cursor = i + len(sentence)
            spans.append((place(i), place(cursor - 1) + 1))
        if not spans:
            break
        if not last and len(spans) > 1:
            spans.pop()  # it may go on past the window: read again from its start
        elif not last:  # no sentence ends in a whole window: say a window's worth
            spans = [(spans[0][0], spans[0][0] + MAX_CHARS * 4)]
        for s, e in spans:
            yield at + s, at + e
        at += spans[-1][1]
        while at < len(text) and text[at].isspace():
            at += 1


def page_utterances(page: int, text: str, start: int = 0) -> Iterator[Utterance]:
    """What is said of page ``page`` (its stored ``text``), from the sentence holding
    offset ``start`` on."""
    for para in _paragraph_spans(text):
        if para[1] <= start:
            continue
        body = text[para[0] : para[1]]
        for s, e in _sentence_spans(body):
            s0, e0 = para[0] + s, para[0] + e
            if e0 <= start:
                continue
            yield from _utterances_of(page, text, s0, e0)


def _paragraph_spans(text: str) -> Iterator[tuple[int, int]]:
    at = 0
    for m in _PARAGRAPH.finditer(text):
        if text[at : m.start()].strip():
            yield at, m.start()
        at = m.end()
    if text[at:].strip():
        yield at, len(text)


def _utterances_of(page: int, text: str, start: int, end: int) -> Iterator[Utterance]:
    """A sentence's utterances: illustrations said apart, long text in pieces."""
    at = start
    for m in _ILLUSTRATION.finditer(text, start, end):
        yield from _said(page, text, at, m.start())
        alt = " ".join(m.group(1).split())
        if alt:
            said = f"Illustration: {alt}"
            marks = ((0, m.start()), (len("Illustration: "), m.start(1)))
            yield Utterance(page, m.start(), m.end(), said, "illustration", marks)
        at = m.end()
    yield from _said(page, text, at, end)


def _said(page: int, text: str, start: int, end: int) -> Iterator[Utterance]:
    spoken, marks = _spoken(text[start:end], start)
    if not _SPEAKABLE.search(spoken):
        return  # an ornament ("* * *"), a lone note reference, an empty piece
    for s, e in _pieces(spoken):
        piece = tuple((a - s, b) for a, b in marks if s <= a < e)
        first = piece[0][1] if piece else start
        last_said = spoken[s:e]
        tail = Utterance(page, first, end, last_said, "text", piece).page_offset(len(last_said))
        yield Utterance(page, first, min(end, tail), last_said, "text", piece)


def plan(
    page_text: Callable[[int], str], page_count: int, page: int, offset: int = 0
) -> Iterator[Utterance]:
    """Every utterance from ``offset`` of ``page`` to the end of the book, lazily: a page's
    text is asked for (``page_text(n)``) only when reading reaches it."""
    for n in range(max(1, page), page_count + 1):
        yield from page_utterances(n, page_text(n), offset if n == page else 0)


def has_text(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` has something to say."""
    return any(_SPEAKABLE.search(t) for t in texts)
