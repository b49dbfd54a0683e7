"""The spoiler check's later words (issue 16, 23): the words, names, phrases and page labels
of a sentence that the reader cannot know yet (``later_terms``), for ``SpoilerGuard``.

A word counts when the book first uses it after the bound and it is distinctive in the book
(``core.agent.spoiler_index``); a name counts by its form too, when the answer writes it as
a name (a name the book uses once, "Belle", or whose stem a common word shares, "bells"). A
phrase counts when the book has it, in several passages, only after the bound. Two less
common words, each new after the bound, count together when the book has them near each
other, or when both are uncommon in English (under ``RARE_PAIR_ZIPF``): a sentence that
paraphrases later pages brings several of their words. Phrases and pairs are weak evidence
(``SpoilerTerm.weak``) that a model's verification may overrule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.agent.context import label_pages
from core.agent.spoiler_index import (
    MAX_PAIR_WORDS,
    MIN_PHRASE_COUNT,
    SpoilerIndex,
    _is_plain,
    _phrase_word,
)
from core.agent.spoiler_text import _GAP, _WORD, GENERAL_ZIPF, visible_text

PHRASE_RARE_ZIPF = 5.3  # a phrase has a word less common than this ("tea party")
# Two words new after the bound, each less common than this in English, count as a pair even
# when the book does not have them near each other (chosen on the tune files, see
# tests/bench/bench_spoiler_gaps.py)
RARE_PAIR_ZIPF = 4.2


@dataclass(frozen=True)
class SpoilerTerm:
    """A word of the answer the reader cannot know yet: as written, and the book's first page."""

    term: str
    first_page: int
    # found only as a motif, a phrase or a pair of ordinary words: a model may overrule it
    weak: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class ReaderWords:
    """What one answer's reader knows, for ``later_terms`` (``SpoilerGuard`` makes it once):
    the book's index, the bound, the page of their selection, the stems and pairs of stems of
    their question and selection, and whether pairs of words the book has only later count."""

    index: SpoilerIndex
    read_to: int | None
    selection_page: int | None
    known: set[str]
    known_pairs: set[tuple[str, str]]
    pairs: bool


def later_terms(guard: ReaderWords, sentence: str) -> tuple[SpoilerTerm, ...]:
    """The words of ``sentence`` the reader cannot know yet, in order, each once."""
    index = guard.index
    if guard.read_to is None or guard.read_to >= index.page_count:
        return ()
    read_to = guard.read_to
    labels = tuple(
        SpoilerTerm(f"p. {last}" if first == last else f"pp. {first}–{last}", last)
        for first, last in label_pages(sentence)
        if read_to < last and not first == last == guard.selection_page
    )
    sentence = visible_text(sentence)
    spans = [(m.start(), m.end()) for m in _WORD.finditer(sentence)]
    if not spans:
        return labels
    words = [sentence[a:b] for a, b in spans]
    stems = index.stems(w.lower() for w in words)
    found: dict[str, SpoilerTerm] = {}
    plain: dict[str, tuple[str, int]] = {}
    for word in words:
        stem = stems[word.lower()]
        if stem in found or stem in plain or stem in guard.known:
            continue
        # a name by its form, written as a name: used once ("Belle"), or sharing its stem
        # with a word met before ("bells")
        name = index.name_forms.get(word.lower()) if word[:1].isupper() else None
        if name is not None and name > read_to:
            found[stem] = SpoilerTerm(word, name)
            continue
        page = index.first_page.get(stem)
        if page is None or page <= read_to:
            continue
        if stem in index.distinctive:
            found[stem] = SpoilerTerm(word, page, stem in index.motifs)
        elif _is_plain(stem) and len(plain) < MAX_PAIR_WORDS:
            plain[stem] = (word, page)
    _phrase_terms(guard, sentence, spans, stems, found, read_to)
    if len(plain) >= 2 and guard.pairs:
        candidates = list(plain.values())
        for i, (a, page_a) in enumerate(candidates):
            for b, page_b in candidates[i + 1 :]:
                if index.near(a.lower(), b.lower()):
                    found.setdefault(stems[a.lower()], SpoilerTerm(a, page_a, True))
                    found.setdefault(stems[b.lower()], SpoilerTerm(b, page_b, True))
        rare = [
            (w, p) for stem, (w, p) in plain.items() if GENERAL_ZIPF.get(stem, 0.0) < RARE_PAIR_ZIPF
        ]
        if len(rare) >= 2:  # two uncommon words the reader has not met: "youngest ... lame"
            for word, page in rare:
                found.setdefault(stems[word.lower()], SpoilerTerm(word, page, True))
    return labels + tuple(found.values())


def _phrase_terms(
    guard: ReaderWords,
    sentence: str,
    spans: list[tuple[int, int]],
    stems: dict[str, str],
    found: dict[str, SpoilerTerm],
    read_to: int,
) -> None:
    """Add phrases of the sentence ("tea party", "pack of cards") that the book has in several
    passages, all after the bound, though each word alone was met before."""
    index = guard.index
    words = [sentence[a:b] for a, b in spans]
    keys = [stems[w.lower()] for w in words]
    for i in range(len(words) - 1):
        a = keys[i]
        if not _phrase_word(a) or a in found:
            continue
        for j in (i + 1, i + 2):
            if j >= len(words):
                break
            if j == i + 2 and words[i + 1].lower() != "of":
                break
            if any(
                _GAP.fullmatch(sentence[spans[k][1] : spans[k + 1][0]]) is None for k in range(i, j)
            ):
                break  # the model's punctuation between the words: not a phrase of the book
            b = keys[j]
            if not _phrase_word(b) or b in found or (a, b) in guard.known_pairs:
                continue
            if min(GENERAL_ZIPF.get(a, 0.0), GENERAL_ZIPF.get(b, 0.0)) >= PHRASE_RARE_ZIPF:
                continue  # two everyday words ("until she", "turned into"): no phrase
            page, passages = index.phrase(" ".join(words[i : j + 1]).lower())
            if passages >= MIN_PHRASE_COUNT and page > read_to:
                text = sentence[spans[i][0] : spans[j][1]]
                found[a + " " + b] = SpoilerTerm(text, page, True)
