"""Word counts for ranking (issue 41, ``positions.word_counts``): a passage's words are found
from the asked stems' beginnings (``positions.stem_prefix``) rather than by cutting out every
word, and the counts are the very ones that counting every word gives."""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from itertools import product

import pytest

from core.search import positions
from tests.conftest import BOOKS

_EVERY_WORD = re.compile(r"[^\W_]+")
# every ending FTS5's Porter stemmer rewrites or removes, and a few it leaves
_ENDINGS = (
    "ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism "
    "iveness fulness ousness aliti iviti biliti icate ative alize iciti ical ful ness eed ed "
    "ing ies sses ss s y ly ity ably ibly bility ated ating bled bling izing ized at bl iz "
    "al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate iti ous ive ize "
    "e ll lled fully ement ively ication icated ibility ability alities iveness"
).split()
_STARTS = [
    "",
    "sensi",
    "a",
    "b",
    "o",
    "ab",
    "st",
    "ev",
    "sto",
    "tr",
    "mo",
    "pro",
    "hop",
    "condit",
    "y",
    "sky",
]
_MORE = ["", "s", "ed", "ing", "ly", "e", "y", "ies"]
# accents (folded by the index), digits, an underscore, CJK, a ligature, a dotted capital I
_ODD = (
    "Café CAFÉ cafe naïve Naïve Élan élan über Über façade FAÇADE rôle cœur Straße "
    "1st 2nd 3rd 42 x_y snake_case ﬁne İstanbul ǅemal Ωmega ½ x² 東京 吃饭 こころ "
    "sensibility mobility relational conditional hopping hoping agreed happily crying cries"
)


@functools.cache
def _texts() -> dict[int, str]:
    paragraphs = []
    for name in ("alice_in_wonderland.txt", "metamorphosis.txt"):
        found = (BOOKS / name).read_text(encoding="utf-8").split("\n\n")
        paragraphs += [p for p in found if p.strip()][:150]
    for name in ("kokoro_excerpt.txt", "hongloumeng_excerpt.txt"):
        paragraphs += (BOOKS / name).read_text(encoding="utf-8")[:3000].split("\n")[:20]
    rng = random.Random(5)
    odd = _ODD.split()
    for _ in range(40):  # the odd words inside ordinary prose, next to quotes and dashes
        prose = paragraphs[rng.randrange(300)].split()
        words = rng.sample(prose, min(8, len(prose))) + rng.sample(odd, 6)
        rng.shuffle(words)
        paragraphs.append(" ".join(words).replace(" ", rng.choice([" ", "—", "“", "’ "]), 3))
    return dict(enumerate(paragraphs))


@functools.cache
def _stems_in(text: str) -> Counter[str]:
    """How often each stem is in ``text``: every word cut out, folded and stemmed."""
    tokens = [t if t.isascii() else positions._folded(t) for t in _EVERY_WORD.findall(text.lower())]
    stems = positions._CHECKER.stems(set(tokens))
    return Counter(stems[t] for t in tokens if stems[t])


def _every_word(texts: dict[int, str], words: list[str]) -> dict[int, dict[str, int]]:
    """The counts as they were made before: every word cut out, folded and stemmed."""
    asked = {w: s for w, s in positions._CHECKER.stems(words).items() if s}
    found: dict[int, dict[str, int]] = {}
    for doc, text in texts.items():
        held = _stems_in(text)
        for word, stem in asked.items():
            if held[stem]:
                found.setdefault(doc, {})[word] = held[stem]
    return found


def test_every_ascii_word_begins_with_its_stems_prefix() -> None:
    """The premise of ``stem_prefix``, on every word of two books and on made-up words
    with every ending the stemmer rewrites (alone, after a stem, before another ending)."""
    words = {
        w
        for name in ("alice_in_wonderland.txt", "metamorphosis.txt")
        for w in _EVERY_WORD.findall((BOOKS / name).read_text(encoding="utf-8").lower())
        if w.isascii()
    }
    words |= {a + b + c for a, b, c in product(_STARTS, _ENDINGS, _MORE)}
    words.discard("")
    stems = positions._CHECKER.stems(words)
    wrong = [(w, s) for w, s in stems.items() if s and not w.startswith(positions.stem_prefix(s))]
    assert len(words) > 6000
    assert wrong == []
    assert stems["sensibility"] == "sensibl"  # the "l" of "ble" (from "-bility"), "e" taken off


@pytest.mark.parametrize("seed", range(2))
def test_the_counts_are_those_of_counting_every_word(seed: int) -> None:
    texts = _texts()
    vocabulary = sorted(
        {w for t in texts.values() for w in _EVERY_WORD.findall(t)} | set(_ODD.split())
    )
    rng = random.Random(seed)
    for _ in range(100):
        words = rng.sample(vocabulary, rng.randint(1, 5))
        if rng.random() < 0.3:  # the words of a query as typed: capitals, a stop word
            words = [w.upper() if rng.random() < 0.3 else w for w in words] + ["the"]
        assert positions.word_counts(texts, words) == _every_word(texts, words), words


def test_a_word_beyond_ascii_is_counted_in_every_form() -> None:
    texts = {1: "Café, CAFE and café—“cafés” too; naïve naive NAÏVE", 2: "no such word", 3: ""}
    counts = positions.word_counts(texts, ["café", "naive"])
    assert counts == {1: {"café": 4, "naive": 3}}
    assert counts == _every_word(texts, ["café", "naive"])
