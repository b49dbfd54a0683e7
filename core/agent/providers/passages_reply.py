"""The no-model reply (passages mode), answer first (issue 40, item 8).

A reader wants the answer, not 1,800 words of passages: the reply leads with the best one or two
sentences of the passages found (each with its page), in under about 250 words, and the
passages themselves follow below ``FOLD_LINE``, where the chat pane folds the reply ("Show
all"). Which sentences lead: each passage's answering sentence (``answer_sentence.pick``, the
bold one) scored against the question by its telling words and closeness in meaning (the
sentence encoder when it is there), the best passage by search a little favoured, a sentence
after one that repeats the question's words a little too; each lead comes with the (not bold)
sentences after it, where the answer often is.

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
SECOND_WITHIN = 1.2  # a second sentence leads too when its score is this close to the best
CANDIDATES = 24  # sentences the encoder reads for the lead (about 10 ms each here)
MIN_WORDS = 4  # shorter sentences ("Pig!") do not lead
# the sentence after one that repeats the question's words often holds the answer ("Would you
# tell me why you are painting those roses?" ... "this here ought to have been a red
# rose-tree"): a sentence gains this much of its previous sentence's telling words (0..1).
# eval_no_model_lead (with FOLLOWERS), answer before the fold: 0 → 19/30, 0.3 → 20/30 (kept),
# 0.6 → 19/30 (the held-out books: 5, 5 and 6 of 20, not used to choose)
AFTER_TELLING = 0.3
# a lead comes with up to this many sentences after it, not bold (the answer often follows the
# sentence that names the question's things: the clock "ticking on the chest of drawers", then
# "It was half past six"): answer before the fold 17 → 19 of 30 alone (held out 3 → 6 of 20)
FOLLOWERS = 2
_WORDS = re.compile(r"\S+")


@dataclass(frozen=True)
class Lead:
    passage: Passage
    sentence: str  # exact text of the passage (or its first LEAD_WORDS words and "…")
    score: float
    after: str = ""  # the sentences that follow it in the passage (shown, not bold)


def _telling(texts: list[str], query: str) -> list[float]:
    """Each text's telling words for ``query`` (0..1: the share of the question's words'
    weight it holds, each word weighted by how rare it is among ``texts``)."""
    weight = word_weights(texts, query)
    wanted = stems(query)
    total = sum(weight.values()) or 1.0
    return [sum(weight.get(t, 0.0) for t in wanted & stems(s)) / total for s in texts]


def _scores(sentences: list[str], query: str, telling: list[float]) -> list[float]:
    """Each sentence's score for ``query``: its telling words (given, 0..1) and closeness in
    meaning (the encoder's; the static model's when the encoder is not there)."""
    encoder = _encoder()
    if encoder is None:
        cheap = cheap_scores(sentences, query, word_weights(sentences, query))
        return [t + 0.2 * c for t, c in zip(telling, cheap, strict=True)]
    question, *vectors = encoded(encoder, [query, *sentences])
    return [
        t + ENCODER_MEANING * float(v @ question) for t, v in zip(telling, vectors, strict=True)
    ]


def _trim(sentence: str, words: int) -> str:
    found = _WORDS.findall(sentence)
    return sentence if len(found) <= words else " ".join(found[:words]) + " …"


def _with_bold(parts: list[str], bold: str) -> list[str]:
    """``parts`` with the bold sentence as one (it may be two in a row, ``answer_sentence.pick``),
    or first when it is not there."""
    if not bold or bold in parts:
        return parts
    for a in range(len(parts) - 1):
        if " ".join(parts[a : a + 2]) == bold:
            return [*parts[:a], bold, *parts[a + 2 :]]
    return [bold, *parts]


def leads(chosen: list[tuple[Passage, str]], query: str) -> list[Lead]:
    """The one or two sentences that lead the reply, best first, each with the sentences after
    it. Candidates: each passage's bold sentence (``chosen``: passage and bold sentence, in
    the search's order) and the sentences of the passages with the most telling words, their
    own or their previous sentence's (at most ``CANDIDATES``, so the encoder reads few)."""
    split = [whole_sentences(p.text) for p, _ in chosen]
    pool: list[tuple[int, int]] = []  # (passage, sentence) of every sentence long enough
    for i, (parts, (_, bold)) in enumerate(zip(split, chosen, strict=True)):
        split[i] = parts = _with_bold(parts, bold)
        pool += [(i, j) for j, s in enumerate(parts) if len(_WORDS.findall(s)) >= MIN_WORDS]
    if not pool:
        return []
    flat = [s for parts in split for s in parts]
    told = dict(zip(flat, _telling(flat, query), strict=True))
    before = [told[split[i][j - 1]] if j else 0.0 for i, j in pool]
    bolds = {s for _, s in chosen}
    cheap = [told[split[i][j]] + AFTER_TELLING * b for (i, j), b in zip(pool, before, strict=True)]
    order = sorted(
        range(len(pool)), key=lambda k: (split[pool[k][0]][pool[k][1]] not in bolds, -cheap[k], k)
    )
    picked = sorted(order[:CANDIDATES])
    sentences = [split[pool[k][0]][pool[k][1]] for k in picked]
    scores = _scores(sentences, query, [told[s] for s in sentences])
    scored = sorted(
        (
            score + AFTER_TELLING * before[k] + (FIRST_PASSAGE if pool[k][0] == 0 else 0),
            pool[k],
        )
        for k, score in zip(picked, scores, strict=True)
    )
    scored.reverse()
    out: list[Lead] = []
    used: set[tuple[int, int]] = set()
    left = LEAD_WORDS
    for score, (i, j) in scored:
        if len(out) == LEADS or left < 20 or score < scored[0][0] - SECOND_WITHIN:
            break
        if (i, j) in used or any(split[i][j] in lead.sentence + lead.after for lead in out):
            continue
        parts = split[i]
        follow = [k for k in range(j + 1, min(len(parts), j + 1 + FOLLOWERS)) if (i, k) not in used]
        follow = follow[: next((n for n, k in enumerate(follow) if k != j + 1 + n), len(follow))]
        used.update((i, k) for k in (j, *follow))
        sentence = _trim(parts[j], left)
        left -= len(_WORDS.findall(sentence))
        after = _trim(" ".join(parts[k] for k in follow), left) if left >= 8 and follow else ""
        left -= len(_WORDS.findall(after))
        out.append(Lead(chosen[i][0], sentence, score, after))
    return out


def lead_block(items: list[Lead]) -> tuple[str, list[CitationRef]]:
    """The reply's first part: each lead sentence in bold with its page."""
    lines: list[str] = []
    cites: list[CitationRef] = []
    for lead in items:
        p = lead.passage
        where = p.label + (f" ({p.printed})" if p.printed else "")
        after = f" {lead.after}" if lead.after else ""
        lines.append(f"> **{lead.sentence}**{after} — {where}")
        if all((c.first_page, c.last_page) != (p.first_page, p.last_page) for c in cites):
            cites.append(CitationRef(p.book_id, p.first_page, p.last_page, lead.sentence))
    return "\n>\n".join(lines) + "\n\n", cites


def words_before_fold(reply: str) -> int:
    """How many words a reader reads before the fold."""
    head = reply.split(FOLD_LINE, 1)[0]
    return len(_WORDS.findall(head))
