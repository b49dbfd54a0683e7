"""Whether an answer was written with the book in front of the model.

A model that never searched or read the book (a small local model that never calls a tool,
the ``llm-only`` strategy) answers from memory and may invent. The window, ``margin ask``
and ``history --json`` say so with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.domain.messages import Passage
from core.search.hits import STOPWORDS
from core.search.sentences import sentences, stems

LABEL = re.compile(r"\[(?:p|pp)\.\s*(\d+)(?:\s*[–-]\s*(\d+))?\]")  # [p. 12], [pp. 12–13]

NOT_CHECKED = "Not checked against the book"
NOT_CHECKED_CLI = f"{NOT_CHECKED}: the model answered without looking at the book."


def checked_against_book(tool_calls: Sequence[Any], passages: Sequence[Any]) -> bool:
    """True when the run looked at the book: a tool ran (a search, a page read) or the model
    was given passages."""
    return bool(tool_calls or passages)


# What a passage holds ------------------------------------------------------------------------
# A page label or a sentence of the answer counts as drawn from a passage only when the
# passage says it: enough of the sentence's content words are in one of its sentences.

_SENTENCE_END = re.compile(r"(?:[.!?…][\"”’)\]]*\s+|\n+)")
MIN_SHARED = 2  # content words a claim shares with the passage's sentence (fewer if it has fewer)
MIN_SHARE = 0.3  # and at least this share of the claim's content words


def _content(text: str) -> set[str]:
    """The stems of the meaningful words ("grins" and "grinning" meet)."""
    return {w for w in stems(text) if w not in STOPWORDS and not w.isdigit()}


def claim_before(text: str, at: int) -> str:
    """The sentence of ``text`` that ends at ``at`` (where a page label stands)."""
    head = text[:at]
    ends = list(_SENTENCE_END.finditer(head.rstrip()))
    start = ends[-1].end() if ends else 0
    return head[start:].strip()


def holding_sentence(claim: str, passage_text: str) -> str | None:
    """The sentence of the passage that says ``claim`` (exact text of the passage), or None
    when none does: the claim's content words are mostly not there."""
    words = _content(LABEL.sub(" ", claim))
    if not words:
        return None
    best, shared = None, 0
    for sentence in sentences(passage_text):
        n = len(words & _content(sentence))
        if n > shared:
            best, shared = sentence, n
    if best is None or shared < min(MIN_SHARED, len(words)):
        return None
    whole = len(words & _content(passage_text))
    return best if whole >= MIN_SHARE * len(words) else None


def held_by(claim: str, passages: Sequence[Passage], first: int = 0, last: int = 0) -> str | None:
    """The sentence of a passage (on pages ``first``–``last`` when given) that says ``claim``."""
    for p in passages:
        if first and not (p.first_page <= last and first <= p.last_page):
            continue
        quote = holding_sentence(claim, p.text)
        if quote is not None:
            return quote
    return None


# A page for a sentence the model left unlabelled ---------------------------------------------
# A small local model often answers right but labels nothing, or a page it was not given. A
# sentence of its answer gets the page of the given passage that says it, checked against the
# passage's text: one sentence of the passage holds most of the claim's words (MIN_CLAIM_SHARE)
# and most of the words it adds to the question (MIN_NEW_SHARE: its answer, not the question
# echoed). "The Duchess's baby turns into a rabbit" is not borne out by a sentence naming the
# Duchess and the Rabbit, nor "the caterpillar smokes a long pipe" by "a long hookah".

_MARKER = re.compile(r"⟪hidden:\d+⟫")
MIN_NEW_SHARE = 0.67  # 2 of 3 is not enough: "the label says POISON" and the DRINK ME label
MIN_CLAIM_SHARE = 0.6


_POSSESSIVE = re.compile(r"[’']s\b")
# irregular forms a paraphrase changes ("wakes" for the book's "woke"), each to its base
# (bench_attach.py: "Gregor has become a vermin when he wakes up" gets p. 3, with nothing wrong
# attached); forms that are other words too ("rose", "left", "bit", "lay") are left out
IRREGULAR = {
    form: base
    for base, forms in (
        ("wake", "woke woken"),
        ("become", "became"),
        ("take", "took taken"),
        ("give", "gave given"),
        ("come", "came"),
        ("see", "saw seen"),
        ("find", "found"),
        ("make", "made"),
        ("say", "said"),
        ("tell", "told"),
        ("think", "thought"),
        ("bring", "brought"),
        ("buy", "bought"),
        ("catch", "caught"),
        ("throw", "threw thrown"),
        ("write", "wrote written"),
        ("eat", "ate eaten"),
        ("drink", "drank drunk"),
        ("fall", "fell fallen"),
        ("grow", "grew grown"),
        ("know", "knew known"),
        ("run", "ran"),
        ("sit", "sat"),
        ("stand", "stood"),
        ("speak", "spoke spoken"),
        ("begin", "began begun"),
        ("sing", "sang sung"),
        ("steal", "stole stolen"),
        ("hide", "hid hidden"),
        ("hold", "held"),
        ("keep", "kept"),
        ("feel", "felt"),
        ("hear", "heard"),
        ("meet", "met"),
        ("sell", "sold"),
        ("send", "sent"),
        ("lose", "lost"),
        ("wear", "wore worn"),
        ("break", "broke broken"),
        ("choose", "chose chosen"),
        ("drive", "drove driven"),
        ("fly", "flew flown"),
        ("forget", "forgot forgotten"),
        ("get", "got gotten"),
        ("shake", "shook shaken"),
        ("sleep", "slept asleep"),
        ("strike", "struck"),
        ("teach", "taught"),
        ("fight", "fought"),
        ("man", "men"),
        ("woman", "women"),
        ("child", "children"),
        ("mouse", "mice"),
        ("foot", "feet"),
        ("tooth", "teeth"),
    )
    for form in forms.split()
}
_WORD = re.compile(r"[^\W\d_]+")


def _base(match: re.Match[str]) -> str:
    """The word's base: its irregular form's, or without the -s of a short word ("uses" meets
    "use", "says" "say": a longer one is cut to four letters anyway)."""
    word = match.group(0).lower()
    if word in IRREGULAR:
        return IRREGULAR[word]
    return word[:-1] if len(word) in (4, 5) and word.endswith("s") and word[-2] != "s" else word


def _words(text: str) -> set[str]:
    """``_content`` cut to four letters, possessives dropped, irregular forms to their base:
    "takes" meets "take", "falling" "falls", "shelf" "shelves", "the cat's" "the cat", "wakes"
    "woke" (a small model paraphrases the book)."""
    return {w[:4] for w in _content(_WORD.sub(_base, _POSSESSIVE.sub("", text)))}


def supporting(claim: str, passages: Sequence[Passage], asked: str) -> tuple[Passage, str] | None:
    """The given passage that says ``claim`` and the sentence of it that does (exact text), or
    None. Of several, the one sharing most of what the claim adds to the question ``asked``,
    then most of its words; on a tie the first given (the search's best)."""
    words = _words(LABEL.sub(" ", claim))
    new = words - _words(asked)
    if not new:
        return None  # the question echoed: nothing to bear out
    best: tuple[int, int, int] | None = None
    found: tuple[Passage, str] | None = None
    for rank, p in enumerate(passages):
        for sentence in sentences(p.text):
            held = _words(sentence)
            added, shared = len(new & held), len(words & held)
            if added < max(1.0, MIN_NEW_SHARE * len(new)) or shared < max(
                min(MIN_SHARED, len(words)), MIN_CLAIM_SHARE * len(words)
            ):
                continue
            key = (added, shared, -rank)
            if best is None or key > best:
                best, found = key, (p, sentence)
    return found


_TOKEN = re.compile(r"⟦(\d+)-(\d+)⟧")  # a label while the answer is cut into sentences


def _token(match: re.Match[str]) -> str:
    return f"⟦{match.group(1)}-{match.group(2) or match.group(1)}⟧"


def claims(answer: str, cited: set[tuple[int, int]] | None = None) -> list[str]:
    """The sentences of ``answer`` without a label to a page already ``cited`` (a label at the
    start of the next sentence counts as this one's), labels and held-back sentences left out."""
    parts = sentences(LABEL.sub(_token, _MARKER.sub(" ", answer)))
    out: list[str] = []
    leading = re.compile(r"(?:\s*⟦\d+-\d+⟧)+")
    for i, sentence in enumerate(parts):
        sentence = leading.sub("", sentence, count=1) if leading.match(sentence) else sentence
        after = parts[i + 1] if i + 1 < len(parts) else ""
        lead = m.group(0) if (m := leading.match(after)) else ""
        pages = {(int(a), int(b)) for a, b in _TOKEN.findall(sentence + lead)}
        if cited and pages & cited:
            continue
        text = " ".join(_TOKEN.sub(" ", sentence).split())
        if text.strip(" .!?"):
            out.append(text)
    return out
