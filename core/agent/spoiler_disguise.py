"""Later names in disguise (issue 46, item 1): what the plain check misses because the model
wrote the name so that no word of the sentence is the name, though the reader reads it.

``disguised_terms`` reads the sentence the ways a reader (or a model told to hide a name) would:

- **as shown**: HTML comments dropped (the chat shows ``Wick<!-- -->ham`` as one word), a
  line-break hyphen joined ("Wick- ham"), letters split by spaces, no-break spaces, dots or
  hyphens joined ("W i c k h a m", "W.i.c.k.h.a.m."), a symbol or emoji inside a word dropped,
  digits and signs used as letters folded ("W1ckh4m"), and the words of a link's URL and title
  (the reader sees them on hover);
- **decoded**: a word that is no word (not English, not the book's) read backwards, in ROT13
  and from pig Latin;
- **misspelt**: such a word within a bounded edit distance of a later name or distinctive
  word (or sounding alike: "Wikkum"), unless a word the reader has met, or an English word, is
  as close;
- **split**: two pieces that join into a later name, next to each other ("Cater pillar") or,
  when the answer talks about how a name starts or ends, anywhere in the last sentences ("a
  man whose name starts with Wick. The name ends with ham.").

Whatever joins to a later word is held and marked doubtful (``SpoilerTerm.weak``): a verifying
model may overrule it, the reader never sees it silently. A name the reader has met, spelled
out, stays a name the reader has met: decoding finds only words first used after the bound.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from core.agent.spoiler_index import MIN_LENGTH
from core.agent.spoiler_terms import SpoilerTerm, later_terms
from core.agent.spoiler_text import _WORD, GENERAL_ZIPF, visible_text

if TYPE_CHECKING:
    from core.agent.spoilers import SpoilerGuard

MIN_FUZZY = 5  # later words shorter than this are never matched by distance (too many lookalikes)
MIN_SPLIT = 6  # a name joined from two pieces is at least this long
RECENT_WORDS = 40  # the words of the answer's last sentences kept for a name split across them

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010\u2011\u00ad]\s*\n?\s*(?=[a-z])")
# three or more single letters (or digits) split by the same kind of separator
_SPACED = re.compile(
    r"(?<![^\W_])(?:[^\W_](?:[ \t\u00a0\u2007\u2009\u202f]+|\.|-|·|\*|_|\|)){2,}[^\W_]\.?(?![^\W_])"
)
_SEPARATORS = re.compile(r"[ \t\u00a0\u2007\u2009\u202f.\-·*_|]")
_LEET = str.maketrans("0134578@$!|", "oieastbasil")
_LEET_L = str.maketrans("1|", "ll")
_MIXED = re.compile(r"[^\W_]*(?:\d[^\W\d_]|[^\W\d_]\d|[@$|!][^\W\d_])[\w@$|!]*")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(]([^\"')]*)[\"')])?\s*\)")
_HREF = re.compile(r"""(?:href|title|src|alt)\s*=\s*["']([^"']*)["']""", re.I)
_BARE_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_CUE = re.compile(
    r"\b(?:starts?|starting|begins?|beginning|ends?|ending|first|last|second|half|halves|part|"
    r"syllables?|letters?|spell\w*|prefix|suffix|rhymes?|sounds?)\b",
    re.I,
)
_VOWELS = frozenset("aeiou")
_ENGLISH = tuple(GENERAL_ZIPF)


def _symbol_inside_word(text: str) -> str:
    """``text`` with symbols (emoji, dingbats, signs) inside a word dropped: "Wick🎩ham"."""
    out: list[str] = []
    n = len(text)
    for i, c in enumerate(text):
        if unicodedata.category(c) in ("So", "Sk", "Sm", "Co", "Cn") or c in "\ufe0f\u200d":
            before = next((text[j] for j in range(i - 1, -1, -1) if not _dropped(text[j])), " ")
            after = next((text[j] for j in range(i + 1, n) if not _dropped(text[j])), " ")
            if before.isalpha() and after.isalpha():
                continue
        out.append(c)
    return "".join(out)


def _dropped(c: str) -> bool:
    return unicodedata.category(c) in ("So", "Sk", "Sm", "Co", "Cn", "Mn") or c in "\ufe0f\u200d"


def _links(text: str) -> str:
    """The words of the links' targets and titles: what a hover shows."""
    parts = [g for m in _LINK.finditer(text) for g in m.groups() if g]
    parts += _HREF.findall(text) + _BARE_URL.findall(text)
    words = []
    for part in parts:
        part = unquote(unquote(part))
        part = re.sub(r"^[a-z][\w+.-]*:(?://)?", " ", part)  # the scheme
        part = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", part)  # camelCase
        words.append(re.sub(r"[^\w']+|_", " ", part))
    return " ".join(words)


def as_shown(sentence: str, *, links: bool = True) -> str:
    """The sentence as the reader reads it, disguises undone (not decoded): comments dropped,
    split letters and line-break hyphens joined, symbols inside words dropped, digits used as
    letters folded, and (``links``) the words of its links' targets and titles at the end."""
    hover = _links(sentence) if links else ""
    text = _COMMENT.sub("", sentence)
    text = visible_text(text)
    text = _LINE_HYPHEN.sub("", text)
    text = _symbol_inside_word(text)
    text = _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group()), text)
    text = _MIXED.sub(lambda m: _leet(m.group()), text)
    return f"{text} {visible_text(hover)}" if hover else text


def _leet(word: str) -> str:
    if not any(c.isalpha() for c in word):
        return word
    folded = word.translate(_LEET)
    other = word.translate(_LEET_L).translate(_LEET)
    return folded if other == folded else f"{folded} {other}"


@dataclass(frozen=True)
class LaterWords:
    """Per guard (book and bound): the later words disguises are matched against, and what
    the reader has met (a misspelling as close to a word met is no later name)."""

    later: dict[str, int]  # later name form or distinctive stem -> first page
    fuzzy: tuple[str, ...]  # those long enough to match by distance
    names: tuple[str, ...]  # the later names among them
    sounds: dict[str, str]  # sound key -> later word
    met: tuple[str, ...]  # name forms and stems the reader has met
    met_names: tuple[str, ...]  # the name forms among them
    english: tuple[str, ...]  # general English stems

    @classmethod
    def of(cls, guard: SpoilerGuard) -> LaterWords:
        """The words of the guard's book and bound (kept on the book's index, per bound); the
        reader's own words (the question) are never later words (``Disguises._lookup``)."""
        index, read_to = guard.index, guard.read_to or 0
        found = index._disguise.get(read_to)
        if not isinstance(found, LaterWords):
            found = index._disguise[read_to] = cls._build(guard)
        return found

    @classmethod
    def _build(cls, guard: SpoilerGuard) -> LaterWords:
        index, read_to = guard.index, guard.read_to or 0
        later = {f: p for f, p in index.name_forms.items() if p > read_to}
        for stem in index.distinctive:
            page = index.first_page.get(stem, 0)
            if page > read_to and len(stem) >= MIN_LENGTH and stem not in index.known:
                later.setdefault(stem, page)
        fuzzy = tuple(w for w in later if len(w) >= MIN_FUZZY and w.isalpha())
        sounds: dict[str, str] = {}
        for word in fuzzy:
            sounds.setdefault(sound(word), word)
        met = {f for f, p in index.name_forms.items() if p <= read_to}
        met |= {s for s, p in index.first_page.items() if p <= read_to and len(s) >= MIN_LENGTH}
        met |= set(index.known)
        names = tuple(w for w in fuzzy if w in index.name_forms)
        met_names = tuple(f for f, p in index.name_forms.items() if p <= read_to)
        return cls(later, fuzzy, names, sounds, tuple(met), met_names, _ENGLISH)


def sound(word: str) -> str:
    """A rough sound key: "Wickham" and "Wikkum" share "wakam"."""
    w = word.lower()
    for a, b in (("ck", "k"), ("ph", "f"), ("gh", "g"), ("qu", "kw"), ("x", "ks")):
        w = w.replace(a, b)
    w = w.translate(str.maketrans("cqzy", "ksai"))
    if len(w) > 1:
        w = w[0] + re.sub(r"(?<=[^aeiou])h", "", w[1:])
    w = re.sub(r"(.)\1+", r"\1", w)
    return w[:1] + re.sub("[aeiou]+", "a", w[1:])


def _bound(length: int) -> int:
    """The edit distance a misspelling of a word this long may have (short words: none)."""
    if length < MIN_FUZZY:
        return 0
    return 1 if length < 8 else 2


def _nonword(guard: SpoilerGuard, word: str) -> bool:
    """A word no reader knows: not English, not the book's, not the reader's own."""
    low = word.lower()
    if len(low) < 4 or not low.isalpha():
        return False
    stem = guard.index.stems([low])[low]
    index = guard.index
    return (
        stem not in GENERAL_ZIPF
        and stem not in index.first_page
        and low not in index.name_forms
        and stem not in guard._known
    )


def _decodings(word: str) -> Iterable[str]:
    """The word read backwards, in ROT13 and from pig Latin."""
    low = word.lower()
    yield low[::-1]
    yield codecs.encode(low, "rot13")
    if low.endswith("ay") and len(low) >= 5:
        base = low[:-2]
        if base[-1:] in ("w", "y", "h") and base[:1] in _VOWELS:
            yield base[:-1]
        for k in range(1, len(base) - 1):  # the consonants moved to the end ("ongryph-ay")
            yield base[-k:] + base[:-k]


class Disguises:
    """One per guard: finds the later words a sentence holds in disguise."""

    def __init__(self, guard: SpoilerGuard) -> None:
        self.guard = guard
        self._words: LaterWords | None = None
        self._recent: list[str] = []  # the words of the last sentences checked
        self._cue = 0  # sentences left in which a cue of the last ones still counts

    @property
    def words(self) -> LaterWords:
        if self._words is None:
            self._words = LaterWords.of(self.guard)
        return self._words

    def terms(self, sentence: str) -> tuple[SpoilerTerm, ...]:
        """The later words ``sentence`` holds in disguise (each marked weak: doubtful)."""
        guard = self.guard
        if guard.read_to is None or guard.read_to >= guard.index.page_count:
            return ()
        found: dict[str, SpoilerTerm] = {}
        shown = as_shown(sentence)
        if shown != visible_text(sentence):
            for term in later_terms(guard.reader_words, shown):
                found.setdefault(term.term.lower(), _weak(term))
        words = _WORD.findall(shown)
        for i, word in enumerate(words):
            # a capitalised word inside the sentence is a name, even when English has it
            self._decoded(word, found, name=i > 0 and word[:1].isupper())
        self._split(words, found)
        return tuple(found.values())

    def reading(self, sentence: str) -> str:
        """The sentence as the reader reads it, for the semantic layer: disguises undone, the
        words of its links (what a hover shows: "staying at [this one](…/netherfield)" is about
        Netherfield), and a misspelt or split name the reader has met written whole ("Greta",
        "Gre te": Grete)."""
        text = as_shown(sentence)
        met = self.words.met_names
        if not met:
            return text

        def whole(m: re.Match[str]) -> str:
            a, b = m.group(1), m.group(2)
            joined = (a + b).lower()
            if joined in met and (self._unmet(a, 2) or self._unmet(b, 2)):
                return a + b
            return m.group()

        text = re.sub(r"([^\W\d_]{2,}) ([^\W\d_]{2,})", whole, text)

        def fixed(m: re.Match[str]) -> str:
            word = m.group()
            name = m.start() > 0 and word[:1].isupper() and self._unmet(word)
            if not name and not _nonword(self.guard, word):
                return word
            best = process.extractOne(
                word.lower(), met, scorer=DamerauLevenshtein.distance, score_cutoff=1
            )
            return best[0].capitalize() if best is not None and len(best[0]) >= MIN_FUZZY else word

        return _WORD.sub(fixed, text)

    def _lookup(self, word: str) -> int | None:
        """The first page of ``word`` when it is a later name or distinctive word."""
        low = word.lower()
        later = self.words.later
        stem = self.guard.index.stems([low])[low]
        if stem in self.guard._known:
            return None  # the reader's own word
        return later[low] if low in later else later.get(stem)

    def _decoded(self, word: str, found: dict[str, SpoilerTerm], *, name: bool = False) -> None:
        if word.lower() in found:
            return
        if not _nonword(self.guard, word):
            if name and self._unmet(word):
                page = self._misspelt(word.lower(), names=True)
                if page is not None:
                    found[word.lower()] = SpoilerTerm(word, page, True)
            return
        for decoded in _decodings(word):
            page = self._lookup(decoded)
            if page is not None:
                found[word.lower()] = SpoilerTerm(word, page, True)
                return
        page = self._misspelt(word.lower())
        if page is not None:
            found[word.lower()] = SpoilerTerm(word, page, True)

    def _unmet(self, word: str, shortest: int = 4) -> bool:
        """A word the book never has (a name the reader has not met, written as English)."""
        low = word.lower()
        if len(low) < shortest or not low.isalpha() or low in self.guard.index.name_forms:
            return False
        return self.guard.index.stems([low])[low] not in self.guard.index.first_page

    def _misspelt(self, word: str, *, names: bool = False) -> int | None:
        """The first page of the later word ``word`` misspells, if any (bounded distance, or
        the same sound), unless a word met or an English word is as close. ``names``: a
        capitalised English word, matched against later names only, English no rival."""
        words = self.words
        pool = words.names if names else words.fuzzy
        best = process.extractOne(word, pool, scorer=DamerauLevenshtein.distance, score_cutoff=2)
        heard = words.sounds.get(sound(word)) if len(sound(word)) >= 4 else None
        if names and heard not in words.names:
            heard = None
        if best is not None and best[1] <= _bound(len(best[0])):
            target, distance = best[0], int(best[1])
        elif heard is not None:
            target = heard
            distance = int(DamerauLevenshtein.distance(word, heard))
        else:
            return None
        own = {target, self.guard.index.stems([target])[target]}
        for rivals_of in (words.met,) if names else (words.met, words.english):
            rivals = process.extract(
                word, rivals_of, scorer=DamerauLevenshtein.distance, score_cutoff=distance, limit=8
            )
            for rival, far, _ in rivals:
                if rival in own:
                    continue
                if far < distance or target != heard or sound(rival) == sound(word):
                    return None  # a typo of a word the reader knows, as close
        return None if own & self.guard._known else words.later[target]

    def _split(self, words: list[str], found: dict[str, SpoilerTerm]) -> None:
        """Two pieces that join into a later word: next to each other, or (after a word about
        how a name starts or ends) anywhere in the answer's last sentences."""
        low = [w.lower() for w in words]
        pairs: dict[str, str] = {}
        for i in range(len(low) - 1):
            if len(low[i] + low[i + 1]) >= MIN_SPLIT:
                pairs.setdefault(low[i] + low[i + 1], f"{words[i]} {words[i + 1]}")
        if self._cue > 0 or any(_CUE.fullmatch(w) for w in words):
            pool = [w.lower() for w in self._recent] + low
            for j, b in enumerate(low):
                for a in pool[: len(self._recent) + j]:
                    if len(a) >= 3 and len(b) >= 3 and len(a + b) >= MIN_SPLIT:
                        pairs.setdefault(a + b, f"{a}…{b}")
        pairs = {j: shown for j, shown in pairs.items() if j.isalpha()}
        if not pairs:
            return
        later = self.words.later
        stems = self.guard.index.stems(pairs)
        for joined, shown in pairs.items():
            page = later.get(joined, later.get(stems[joined]))
            if page is not None and joined not in found and stems[joined] not in self.guard._known:
                found[joined] = SpoilerTerm(shown, page, True)

    def remember(self, sentence: str) -> None:
        """Keep the words of a sentence checked: a name may be split across sentences."""
        words = _WORD.findall(visible_text(sentence))
        self._recent = (self._recent + words)[-RECENT_WORDS:]
        if _CUE.search(visible_text(sentence)):
            self._cue = 3
        else:
            self._cue -= 1


def _weak(term: SpoilerTerm) -> SpoilerTerm:
    return SpoilerTerm(term.term, term.first_page, True)
