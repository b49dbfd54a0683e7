"""A search hit's snippet: about 24 words of its passage around the query's words, each
matched word between « and » (``core.labels``), "…" where the passage goes on.

Built from the passage text search has already read, instead of FTS5's ``snippet()``, which
reads and unpacks each passage again through the ``chunk_text`` view (about 70 µs a passage:
a third of a library search's time). Words match as the index matches them, closely enough
for a snippet: case and accents folded, and a light stemming (plurals, -ed, -ing, -ly,
possessives) standing in for FTS5's Porter stemmer.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_left

from core.labels import QUOTE_CLOSE, QUOTE_OPEN
from core.store.cjk_index import has_cjk

WORDS = 24
_CHARS_PER_WORD = 8  # generous: English words average about six letters and a space
_SHORT_WORD = 5  # a stretch of short words
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_LETTERS = "\u00c0-\u024f\u1e00-\u1eff"  # letters with accents, which fold to others
_ACCENTED = re.compile(f"[{_LETTERS}]")
_ACCENTED_WORD = re.compile(f"(?<![\\w'’])\\w*[{_LETTERS}]\\w*(?:['’]\\w+)*")
_TAIL = re.compile(r"\w*(?:['’]\w+)*", re.UNICODE)  # a word's rest, after its start
_WORD_OR_APOSTROPHE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'’"
)  # what ``\w`` and an apostrophe are among ASCII characters
_MARKS = "\u2018\u2019\u201c\u201d\u2013\u2014"  # curly quotes, en and em dashes
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")


def fold(word: str) -> str:
    """Lower case without accents ("Café" → "cafe"), as the index's tokenizer sees it."""
    lowered = word.lower().replace("’", "'")
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A light stem of a folded word: possessive, then one common suffix, removed."""
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=4096)
def _stemmed(word: str) -> str:
    """``stem(fold(word))``, remembered (a passage's snippet folds and stems each word that
    starts like a wanted one; the same words come again and again)."""
    return stem(fold(word))


def query_stems(terms: list[str]) -> set[str]:
    """The stems of every word of the query's quoted FTS5 terms (phrases give each word)."""
    return {stem(fold(w)) for term in terms for w in _WORD.findall(term)}


@functools.lru_cache(maxsize=64)
def _starting(wanted: frozenset[str]) -> re.Pattern[str]:
    """Whole words (as ``_WORD`` cuts them) that start with one of the stems, any case."""
    stems = "|".join(re.escape(w) for w in sorted(wanted, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’])(?:{stems})\w*(?:['’]\w+)*", re.IGNORECASE)


def _candidates(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """(start, end, stem) of the words of ``text`` that start like a wanted stem (or hold an
    accent), in order: only those are folded and stemmed."""
    if all(w and w.isascii() for w in wanted) and _plain(text):
        return _found_plain(text, wanted)
    return _found_by_expression(text, wanted)


def _found_by_expression(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """``_candidates`` by regular expressions, for any text."""
    candidates = list(_starting(frozenset(wanted)).finditer(text))
    if _ACCENTED.search(text) is not None:
        candidates += _ACCENTED_WORD.finditer(text)
    return sorted((m.start(), m.end(), _stemmed(m.group(0))) for m in candidates)


def _plain(text: str) -> bool:
    """Whether ``text`` is ASCII but for curly quotes and dashes (which are no words)."""
    for mark in _MARKS:
        if mark in text:
            text = text.replace(mark, "")
    return text.isascii()


def _found_plain(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """``_candidates`` of a text of ASCII words and stems: each stem looked for with
    ``str.find`` in the lower-cased text (as ``_starting``'s expression matches, without
    looking at every character): a word starts where no letter, digit, "_" or apostrophe
    is before it, and goes on over letters, digits and apostrophes between them."""
    lowered = text.lower()
    starts: dict[int, int] = {}
    for wanted_stem in sorted(wanted, key=len, reverse=True):  # the longest first, as there
        at = lowered.find(wanted_stem) if wanted_stem else -1
        while at >= 0:
            if at not in starts and (at == 0 or text[at - 1] not in _WORD_OR_APOSTROPHE):
                starts[at] = len(wanted_stem)
            at = lowered.find(wanted_stem, at + 1)
    found = []
    for at in sorted(starts):
        tail = _TAIL.match(text, at + starts[at])
        end = tail.end() if tail else at + starts[at]
        found.append((at, end, _stemmed(text[at:end])))
    return found


def cjk_snippet(text: str, wanted: set[str], width: int) -> str:
    """About ``width`` characters of Chinese or Japanese ``text`` around its first place
    holding a wanted term, every wanted term in it marked; "" when none is there."""
    places = sorted((at, term) for term in wanted if term and (at := text.find(term)) >= 0)
    if not places:
        return ""
    head = max(0, places[0][0] - width // 4)
    end = min(len(text), head + width)
    piece = text[head:end]
    terms = "|".join(re.escape(t) for t in sorted(wanted, key=len, reverse=True) if t)
    piece = re.sub(terms, lambda m: f"{QUOTE_OPEN}{m.group(0)}{QUOTE_CLOSE}", piece)
    body = " ".join(piece.split())
    return ("…" if head > 0 else "") + body + ("…" if end < len(text) else "")


def best_start(found: list[tuple[int, int, str]], reach: int) -> int:
    """Where the stretch of ``reach`` characters that holds the most stems, then the most
    matches, begins: at the first such match of ``found`` ((start, end, stem), in order of
    their starts). Each match's stretch is found by bisection (looking at every match for
    each took a millisecond for a passage with a hundred)."""
    starts = [f[0] for f in found]
    best, best_key = found[0][0], (-1, -1)
    for start in starts:  # (a match may be found twice at one place: both count)
        lo, hi = bisect_left(starts, start), bisect_left(starts, start + reach)
        key = (len({f[2] for f in found[lo:hi]}), hi - lo)
        if key > best_key:
            best, best_key = start, key
    return best


def make_snippet(text: str, wanted: set[str], words: int = WORDS) -> str:
    """About ``words`` words of ``text`` where the most of the ``wanted`` stems are, each
    matched word marked; "" when none of them is in ``text``. Only the words near the
    matches are cut out (a passage is read once, by regular expressions)."""
    if not wanted:
        return ""
    if any(has_cjk(w) for w in wanted):  # no spaces between words: by characters
        return cjk_snippet(text, wanted, words * _CHARS_PER_WORD // 2)
    found = [f for f in _candidates(text, wanted) if f[2] in wanted]
    if not found:
        return ""
    best = best_start(found, words * _SHORT_WORD)
    head = max(0, best - 4 * _CHARS_PER_WORD)
    end = best + words * _CHARS_PER_WORD
    # the words from ``head`` (no anchor in ``_WORD``: as in ``text[head:end]``), as far as
    # ``words`` from two before the best match
    tokens: list[tuple[int, int]] = []
    at = -1
    for word in _WORD.finditer(text, head, end):
        if at < 0 and word.start() == best:
            at = len(tokens)
        tokens.append(word.span())
        if at >= 0 and len(tokens) >= max(0, at - 2) + words:
            break
    first = max(0, at - 2)  # (the best match is the first word when not among them)
    chosen = tokens[first : first + words]
    marked = {f[0] for f in found}
    out: list[str] = []
    cursor = chosen[0][0]
    for a, b in chosen:
        out.append(text[cursor:a])
        out.append(f"{QUOTE_OPEN}{text[a:b]}{QUOTE_CLOSE}" if a in marked else text[a:b])
        cursor = b
    body = " ".join("".join(out).split())
    before = head > 0 or first > 0
    after = _WORD.search(text, chosen[-1][1]) is not None
    return ("…" if before else "") + body + ("…" if after else "")
