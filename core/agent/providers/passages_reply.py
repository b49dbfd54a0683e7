"""The no-model reply (passages mode), answer first (issue 40, item 8).

A reader wants the answer, not 1,800 words of passages: the reply leads with the best one or two
sentences of the passages found (each with its page), in under about 250 words, and the
passages themselves follow below ``FOLD_LINE``, where the chat pane folds the reply ("Show
all"). Which sentences lead: each passage's answering sentence (``answer_sentence.pick``, the
bold one) scored against the question by its telling words and closeness in meaning (the
sentence encoder when it is there), the best passage by search a little favoured.

The same reply answers a model's empty or citation-only answer (``core.agent.bare``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.agent.answer import FOLD_LINE
from core.agent.providers.answer_sentence import (
    ENCODER_MEANING,
    _encoder,
    cheap_scores,
    encoded,
    word_weights,
)
from core.agent.types import CitationRef, Passage
from core.search.sentences import ENDED as _ENDED
from core.search.sentences import abbreviated, is_heading, paragraphs, sentences, stems


def whole_sentences(text: str) -> list[str]:
    """The sentences of a passage without the pieces its cut left at either end (a passage
    starts where the one before it ended, often mid-sentence), nor its headings, captions
    and ornaments (the chapter is on the passage's line already)."""
    paras = paragraphs(text)
    kept = [p for p in paras if not is_heading(p)]
    parts = [s for p in kept for s in sentences(p)]
    if kept and paras[0] == kept[0] and len(parts) > 1 and parts[0][:1].islower():
        parts = parts[1:]
    if len(parts) > 1 and (not _ENDED.search(parts[-1]) or abbreviated(parts[-1])):
        parts = parts[:-1]
    return parts


LEAD_WORDS = 190  # the lead sentences, at most (the header and page lines make ~250)
LEADS = 2
FIRST_PASSAGE = 0.35  # the search's best passage is a little more likely to hold the answer
SECOND_WITHIN = 1.2
CANDIDATES = 24  # sentences the encoder reads for the lead (about 10 ms each here)
MIN_WORDS = 4  # shorter sentences ("Pig!") do not lead
SHORT = 12  # a lead this short comes with the sentence after it  # a second sentence leads too when its score is this close to the best
_WORDS = re.compile(r"\S+")


@dataclass(frozen=True)
class Lead:
    passage: Passage
    sentence: str  # exact text of the passage (or its first LEAD_WORDS words and "…")
    score: float


def _scores(sentences: list[str], query: str) -> list[float]:
    """Each sentence's score for ``query``: its telling words (0..1) and closeness in meaning
    (the encoder's; the static model's when the encoder is not there)."""
    weight = word_weights(sentences, query)
    wanted = stems(query)
    total = sum(weight.values()) or 1.0
    telling = [sum(weight.get(t, 0.0) for t in wanted & stems(s)) / total for s in sentences]
    encoder = _encoder()
    if encoder is None:
        cheap = cheap_scores(sentences, query, weight)
        return [t + 0.2 * c for t, c in zip(telling, cheap, strict=True)]
    question, *vectors = encoded(encoder, [query, *sentences])
    return [
        t + ENCODER_MEANING * float(v @ question) for t, v in zip(telling, vectors, strict=True)
    ]


def _trim(sentence: str, words: int) -> str:
    found = _WORDS.findall(sentence)
    return sentence if len(found) <= words else " ".join(found[:words]) + " …"


def leads(chosen: list[tuple[Passage, str]], query: str) -> list[Lead]:
    """The one or two sentences that lead the reply, best first. Candidates: each passage's
    bold sentence (``chosen``: passage and bold sentence, in the search's order) and the
    sentences of the passages with the most telling words (at most ``CANDIDATES``, so the
    encoder reads few)."""
    pool: list[tuple[int, str]] = []
    for i, (p, bold) in enumerate(chosen):
        if bold:
            pool.append((i, bold))
        pool += [(i, s) for s in whole_sentences(p.text) if s != bold]
    pool = [(i, s) for i, s in pool if len(_WORDS.findall(s)) >= MIN_WORDS]
    if not pool:
        return []
    weight = word_weights([s for _, s in pool], query)
    wanted = stems(query)
    told = [sum(weight.get(t, 0.0) for t in wanted & stems(s)) for _, s in pool]
    bolds = {s for _, s in chosen}
    order = sorted(range(len(pool)), key=lambda k: (pool[k][1] not in bolds, -told[k], k))
    picked = sorted(order[:CANDIDATES])
    sentences = [pool[k][1] for k in picked]
    scores = _scores(sentences, query)
    scored = [
        Lead(chosen[pool[k][0]][0], pool[k][1], score + (FIRST_PASSAGE if pool[k][0] == 0 else 0))
        for k, score in zip(picked, scores, strict=True)
    ]
    scored.sort(key=lambda lead: -lead.score)
    out = [_answered(scored[0])]
    for other in scored[1:]:
        if len(out) == LEADS:
            break
        if other.score < scored[0].score - SECOND_WITHIN:
            break
        other = _answered(other)
        if not any(other.sentence in o.sentence or o.sentence in other.sentence for o in out):
            out.append(other)
    left = LEAD_WORDS
    trimmed: list[Lead] = []
    for lead in out:
        if left < 20:
            break
        text = _trim(lead.sentence, left)
        left -= len(_WORDS.findall(text))
        trimmed.append(Lead(lead.passage, text, lead.score))
    return trimmed


def _answered(lead: Lead) -> Lead:
    """A lead that asks a question in the book ("Have you guessed the riddle yet?") or is very
    short comes with the sentence after it, which answers it more often than not."""
    asks = lead.sentence.rstrip("”\"’' ").endswith("?")
    if not asks and len(_WORDS.findall(lead.sentence)) >= SHORT:
        return lead
    parts = whole_sentences(lead.passage.text)
    if lead.sentence not in parts:
        return lead
    at = parts.index(lead.sentence)
    if at + 1 >= len(parts):
        return lead
    return Lead(lead.passage, f"{lead.sentence} {parts[at + 1]}", lead.score)


def lead_block(items: list[Lead]) -> tuple[str, list[CitationRef]]:
    """The reply's first part: each lead sentence in bold with its page."""
    lines: list[str] = []
    cites: list[CitationRef] = []
    for lead in items:
        p = lead.passage
        where = p.label + (f" ({p.printed})" if p.printed else "")
        lines.append(f"> **{lead.sentence}** — {where}")
        if all((c.first_page, c.last_page) != (p.first_page, p.last_page) for c in cites):
            cites.append(CitationRef(p.book_id, p.first_page, p.last_page, lead.sentence))
    return "\n>\n".join(lines) + "\n\n", cites


def words_before_fold(reply: str) -> int:
    """How many words a reader reads before the fold."""
    head = reply.split(FOLD_LINE, 1)[0]
    return len(_WORDS.findall(head))
