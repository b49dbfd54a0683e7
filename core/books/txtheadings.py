"""Chapter headings in plain text.

A plain-text book has no markup, so headings are recognised by their form. Only a paragraph
that is a single line (or a labelled heading plus a short title line under it) can be one:

- labelled headings, always: ``CHAPTER XII``, ``Chapter 3: The Storm``, ``STAVE I: MARLEY'S
  GHOST``, ``BOOK THE FIRST``, ``Part Two``, ``Letter 4`` … and lone ``PREFACE``-like words;
- numbered headings: a roman or arabic number alone (``II``, ``3.``) or before a title
  (``IV. THE BOSCOMBE VALLEY MYSTERY``) count only as part of a run that counts up from one,
  so a stray ``I`` or ``1.`` in the text is never a heading;
- all-capitals lines count only when the book has no labelled or numbered headings at all,
  when there are at least two of them, each different, each followed by real text, and none
  ending like an exclamation or a question.

A contents list at the front (the same headings with no text between them, repeated later)
is not taken for chapters. The result is deterministic: the same text gives the same
headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty"
).split()
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "last final"
).split()
_ROMAN = r"(?:[IVXLCDM]+|[ivxlcdm]+)"
_WORDNUM = "|".join(_NUMBER_WORDS + _ORDINALS)
_LABELS = (
    "chapter|chap\\.|book|part|stave|volume|vol\\.|act|scene|section|letter|canto|adventure|"
    "episode|lecture|lesson|story|tale|fit"
)
_BIG_LABELS = frozenset(["book", "part", "volume", "vol."])
_LABELLED = re.compile(
    rf"^(?P<label>{_LABELS})\s+(?P<num>{_ROMAN}|\d{{1,3}}|(?:the\s+)?(?:{_WORDNUM})"
    rf"(?:[- ](?:{_WORDNUM}))?)(?P<sep>\s*[.:;—–-]+\s*|\s+|$)(?P<rest>.*)$",
    re.I,
)
_LONE_WORD = re.compile(
    r"^(?:preface|introduction|prologue|epilogue|conclusion|appendix|afterword|foreword|"
    r"postscript|prelude|interlude|envoi|l'envoi)\.?$",
    re.I,
)
_LONE_NUMBER = re.compile(r"^(?P<num>[IVXLCDM]{1,8}|\d{1,3})\.?$")
_NUMBERED_TITLE = re.compile(r"^(?P<num>[IVXLCDM]{1,8}|\d{1,3})\.\s+(?P<rest>\S.{0,100})$")
_ALL_CAPS = re.compile(r"^(?=.*[A-Z].*[A-Z].*[A-Z])[^a-z]{3,80}$")
# what _ALL_CAPS asks after its look-ahead, tried first: most lines fail at their first small
# letter, where the look-ahead walks the whole line back and forth (issue 41: 10 ms of a
# 3 MB text)
_NO_SMALL = re.compile(r"[^a-z]{3,80}$")
_NOT_HEADINGS = frozenset(["THE END", "FINIS", "END", "CONTENTS", "THE END."])
_SMALL_WORDS = frozenset(
    "a an and as at but by for from in into nor of on or over the to up upon with".split()
)
_MAX_HEADING = 100
_MAX_TITLE = 80  # what _title_like allows
# no paragraph longer than this is a heading: one line of at most _MAX_HEADING, or two (a
# label, then a title line that is _title_like)
_CANDIDATE = _MAX_HEADING + 1 + _MAX_TITLE
_LISTING_BODY = 200
_CAPS_BODY = 300


def lines_of(raw: str) -> tuple[str, ...]:
    """The non-empty lines of a paragraph as it stands in the file, stripped."""
    return tuple(filter(None, map(str.strip, raw.split("\n"))))


class Paragraphs:
    """The paragraphs of a text file: ``texts[i]`` is a paragraph's text (its lines joined
    by spaces: made once, the parser and the heading finder both read it), ``lines(i)`` its
    lines, cut from the paragraph as it stands in the file (``raws[i]``) only when asked:
    the heading finder asks for short paragraphs only (issue 41: a 3 MB book has 10,000
    paragraphs, and an object or a split a paragraph cost a third of its parse)."""

    __slots__ = ("_lines", "raws", "texts")

    def __init__(self, texts: list[str], raws: list[str]) -> None:
        self.texts = texts
        self.raws = raws
        self._lines: dict[int, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self.texts)

    def lines(self, index: int) -> tuple[str, ...]:
        found = self._lines.get(index)
        if found is None:
            body = self.raws[index].strip("\n")
            # its lines as they stand, when they are as long as its text: none of them is
            # empty or has whitespace at an end (either would make the text shorter)
            if len(body) == len(self.texts[index]):
                found = tuple(body.split("\n"))
            else:
                found = lines_of(body)
            self._lines[index] = found
        return found


@dataclass(frozen=True)
class Heading:
    """A paragraph of a text book read as a heading (and the paragraphs it spans)."""

    index: int  # paragraph index
    title: str
    level: int
    span: int = 1  # paragraphs the heading uses (2 when a title line follows a label)


def roman_value(text: str) -> int | None:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    text = text.upper()
    if not text or any(ch not in values for ch in text):
        return None
    total = 0
    for i, ch in enumerate(text):
        v = values[ch]
        if i + 1 < len(text) and values[text[i + 1]] > v:
            total -= v
        else:
            total += v
    canonical = _to_roman(total)
    return total if canonical == text else None


def _to_roman(n: int) -> str:
    out = []
    for value, numeral in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while n >= value:
            out.append(numeral)
            n -= value
    return "".join(out)


def _number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return roman_value(text)


def _title_like(text: str) -> bool:
    """Short, with most words capitalised (or all capitals), not a sentence of prose."""
    words = re.findall(r"[^\W\d_][\w'’-]*", text)
    if not words or len(text) > _MAX_TITLE:
        return False
    if text.rstrip().endswith((",", ";")):
        return False
    if not any(ch.islower() for ch in text):
        return True
    significant = [w for w in words if w.lower() not in _SMALL_WORDS] or words
    capital = sum(1 for w in significant if w[0].isupper())
    return capital / len(significant) >= 0.6 and words[0][0].isupper()


def _labelled(line: str) -> tuple[str, str, str] | None:
    """(label, number, rest) for a labelled heading line, else None."""
    if len(line) > _MAX_HEADING or not line[:1].isupper():
        return None
    m = _LABELLED.match(line)
    if m is None:
        return None
    label, num, sep, rest = m["label"], m["num"], m["sep"], m["rest"].strip()
    if not label[0].isupper():
        return None
    if re.fullmatch(_ROMAN, num) and num.upper() != num and num.lower() != num:
        return None
    if re.fullmatch(_ROMAN, num) and roman_value(num) is None:
        return None
    if num.lower() in ("i",) and label.lower() in ("part", "book") and rest and not sep.strip():
        # "Part I was" is prose; "Part I. The Storm" and "Part I" are headings
        return None
    if rest and not sep.strip() and not _title_like(rest):
        return None
    if rest and sep.strip() and len(rest) > 80:
        return None
    return label.lower(), num.lower(), rest


def find_headings(paras: Paragraphs) -> list[Heading]:
    """Headings among ``paras``, in order, each with its title and contents level."""
    texts = paras.texts
    # 1. candidates by form
    labelled: dict[int, tuple[str, str, int]] = {}  # index -> (family key, title, span)
    numbered: list[tuple[int, str, int, str]] = []  # (index, style, value, title)
    caps: list[int] = []
    for i in [i for i, text in enumerate(texts) if len(text) <= _CANDIDATE]:
        lines = paras.lines(i)
        first = lines[0]
        if len(lines) > 2 or len(first) > _MAX_HEADING:
            continue
        found = _labelled(first)
        if found is not None:
            label, num, rest = found
            title, span = first, 1
            if len(lines) == 2:
                if rest or not _title_like(lines[1]):
                    continue
                title = f"{first} {lines[1]}"
            elif not rest and i + 1 < len(texts):
                nxt = paras.lines(i + 1)
                if (
                    len(nxt) == 1
                    and _title_like(nxt[0])
                    and _labelled(nxt[0]) is None
                    and not _LONE_NUMBER.match(nxt[0])
                    and not _LONE_WORD.match(nxt[0])
                ):
                    title, span = f"{first} {nxt[0]}", 2
            labelled[i] = (f"{label} {num}", title, span)
            continue
        if len(lines) != 1:
            continue
        if _LONE_WORD.match(first) and (first.isupper() or first.istitle()):
            labelled[i] = (first.lower().rstrip("."), first, 1)
            continue
        m = _LONE_NUMBER.match(first)
        if m is not None:
            value = _number(m["num"])
            if value is not None:
                numbered.append((i, "lone", value, first))
            continue
        m = _NUMBERED_TITLE.match(first)
        if m is not None and _title_like(m["rest"]):
            value = _number(m["num"])
            if value is not None:
                numbered.append((i, "titled", value, first))
            continue
        if (
            _NO_SMALL.match(first)
            and _ALL_CAPS.match(first)
            and first.strip(" .") not in _NOT_HEADINGS
        ):
            caps.append(i)

    # 2. numbers count only in runs that count up from one
    kept_numbers: dict[int, tuple[str, str]] = {}
    for style in ("lone", "titled"):
        for arabic in (False, True):
            runs: list[list[tuple[int, str, int]]] = []
            for index, kind, value, title in numbered:
                if kind != style or title[0].isdigit() != arabic:
                    continue
                run = next((r for r in reversed(runs) if r[-1][2] == value - 1), None)
                if run is not None:
                    run.append((index, title, value))
                elif value == 1:
                    runs.append([(index, title, value)])
            for run in runs:
                if len(run) >= 2:
                    for index, title, _ in run:
                        kept_numbers[index] = (style, title)

    candidates: dict[int, tuple[str, str, int, str]] = {}  # index -> (family, title, span, key)
    for index, (key, title, span) in labelled.items():
        family = key.split()[0] if " " in key else "word"
        candidates[index] = (family, title, span, key)
    for index, (style, title) in kept_numbers.items():
        if index not in candidates:
            candidates[index] = (style, title, 1, f"{style} {title}")
    if not candidates:
        # repeated capital lines (CHORUS., a letter's SIR,) are labels, not chapter titles
        counts: dict[str, int] = {}
        for index in caps:
            line = paras.lines(index)[0]
            counts[line] = counts.get(line, 0) + 1
        for index in caps:
            line = paras.lines(index)[0]
            if counts[line] == 1 and not line.endswith(("!", "?", ",", ";", ":")):
                candidates[index] = ("caps", line, 1, line)

    # 3. body text after each candidate; contents listings and empty headings go
    order = sorted(candidates)
    bodies: list[int] = []
    for n, index in enumerate(order):
        end = order[n + 1] if n + 1 < len(order) else len(texts)
        start = index + candidates[index][2]
        size = 0
        for j in range(start, end):
            size += len(texts[j])
            if size >= 1000:
                break
        bodies.append(size)
    keys_after: list[set[str]] = []
    seen: set[str] = set()
    for index in reversed(order):
        keys_after.append(set(seen))
        seen.add(candidates[index][3])
    keys_after.reverse()
    dropped: set[int] = set()
    for n, index in enumerate(order):
        family, _, _, key = candidates[index]
        repeats = key in keys_after[n]
        listing = repeats and bodies[n] < _LISTING_BODY
        tail = (
            repeats
            and n > 0
            and order[n - 1] in dropped
            and candidates[order[n - 1]][0] == family
            and bodies[n - 1] < _LISTING_BODY
        )
        if listing or tail or (family == "caps" and bodies[n] < _CAPS_BODY):
            dropped.add(index)
    if sum(1 for i in order if candidates[i][0] == "caps" and i not in dropped) == 1:
        dropped.update(i for i in order if candidates[i][0] == "caps")
    # a last heading with nothing after it ("THE END" style) is not a chapter
    order = [i for i in order if i not in dropped]
    if order and order[-1] + candidates[order[-1]][2] >= len(texts):
        order.pop()

    # 4. levels: books and parts above chapters; lone numbers below titled ones
    families = {candidates[i][0] for i in order}
    has_big = any(f in _BIG_LABELS for f in families)
    has_titled = bool(families - {"lone", "caps", "word", *_BIG_LABELS})
    headings: list[Heading] = []
    for index in order:
        family, title, span, _ = candidates[index]
        level = 1 if family in _BIG_LABELS else 1 + has_big
        if family == "lone" and has_titled:
            level += 1
        headings.append(Heading(index, " ".join(title.split()), level, span))
    return headings
