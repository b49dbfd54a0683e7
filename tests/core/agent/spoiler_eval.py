"""The spoiler check's evaluation on hand-written answers (tests/core/agent/spoiler_data/).

Used by tests/core/agent/test_spoilers.py (which asserts the aims) and
tests/bench/bench_spoilers.py (which prints the figures).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import peewee as pw

from core.agent.spoiler_semantic import BookMeaning
from core.agent.spoilers import Segment, SpoilerGuard, SpoilerIndex, SpoilerTerm

DATA = Path(__file__).resolve().parent / "spoiler_data"


@dataclass(frozen=True)
class EvalBook:
    name: str  # prefix of the data files
    file: str  # fixture in tests/fixtures/books
    read_to: int  # the end of the part the answers may use
    question: str


BOOKS = (
    EvalBook(
        "alice",
        "alice_in_wonderland.epub",
        21,  # chapter IV starts on p. 22 (checked against the contents in the tests)
        "What has happened to Alice so far, and how does her adventure go on?",
    ),
    EvalBook(
        "metamorphosis",
        "metamorphosis.epub",
        28,  # part II starts on p. 29 (checked against the contents in the tests)
        "Why was Gregor transformed, and what will become of him and his family?",
    ),
)


def sentences(name: str) -> list[str]:
    text = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


@dataclass
class EvalResult:
    leaks: int = 0
    caught: int = 0
    honest: int = 0
    false_alarms: int = 0
    missed: list[str] = field(default_factory=list)
    alarms: list[tuple[str, tuple[SpoilerTerm, ...]]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.leaks if self.leaks else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.honest if self.honest else 0.0


def combined(*results: EvalResult) -> EvalResult:
    out = EvalResult()
    for r in results:
        out.leaks += r.leaks
        out.caught += r.caught
        out.honest += r.honest
        out.false_alarms += r.false_alarms
        out.missed += r.missed
        out.alarms += r.alarms
    return out


def guard(index: SpoilerIndex, book: EvalBook) -> SpoilerGuard:
    return SpoilerGuard(index, read_to=book.read_to, question=book.question, meaning=None)


def load_meanings(db: pw.SqliteDatabase, book_ids: Iterable[int]) -> BookMeaning:
    """The books' chunk vectors written now (an import makes them in the background) and
    loaded for the test by meaning: a ``BookMeaning`` of the evaluation's own, ready."""
    from core.search.vectors import BookVectors

    meanings = BookMeaning()
    for book_id in book_ids:
        BookVectors(db).index_book(book_id)
        meanings.wait(db, book_id)
        if meanings.get(db, book_id) is None:
            raise RuntimeError(f"book {book_id}: no vectors for the test by meaning")
    return meanings


def flagged(guard: SpoilerGuard, sentence: str) -> tuple[SpoilerTerm, ...]:
    segments = guard.feed(sentence) + guard.flush()
    return tuple(t for s in segments if s.hidden for t in s.terms)


def evaluate(db: pw.SqliteDatabase, book_ids: dict[str, int], part: str = "") -> EvalResult:
    """Run every sentence of the set through a fresh guard; ``book_ids`` maps name → book id.
    ``part`` is "" for the main set, "_heldout" for the set written after the first tuning."""
    result = EvalResult()
    for book in BOOKS:
        index = SpoilerIndex.build(db, book_ids[book.name])
        for sentence in sentences(f"{book.name}{part}_leaks"):
            result.leaks += 1
            if flagged(guard(index, book), sentence):
                result.caught += 1
            else:
                result.missed.append(f"{book.name}: {sentence}")
        for sentence in sentences(f"{book.name}{part}_honest"):
            result.honest += 1
            terms = flagged(guard(index, book), sentence)
            if terms:
                result.false_alarms += 1
                result.alarms.append((f"{book.name}: {sentence}", terms))
    return result


# --- issue 23: the evaluation by kind (spoiler_data/cases.txt) -------------------------------

EXTRA_BOOKS = (
    EvalBook(
        "carol",
        "a_christmas_carol.epub",
        25,  # the end of Stave I (pp. 6-25); Fezziwig first appears on p. 36
        "What has happened to Scrooge so far?",
    ),
    EvalBook(
        "holmes",
        "the_adventures_of_sherlock_holmes.epub",
        60,  # the end of "The Redheaded League"; "A Case of Identity" starts on p. 60
        "What has Holmes solved so far?",
    ),
)


def _confuse(table: dict[str, str]) -> Callable[[str], str]:
    return lambda w: "".join(table.get(c, c) for c in w)


_CYRILLIC = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і"}
_CYRILLIC |= {"A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "K": "К", "M": "М", "O": "О"}
_CYRILLIC |= {"P": "Р", "T": "Т", "X": "Х"}
_GREEK = {"o": "ο", "i": "ι", "v": "ν", "u": "υ", "A": "Α", "B": "Β", "E": "Ε", "H": "Η"}
_GREEK |= {"I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν", "O": "Ο", "P": "Ρ", "T": "Τ", "Z": "Ζ"}


def _fullwidth(w: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in w)


def _math_bold(w: str) -> str:
    out = []
    for c in w:
        if "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        else:
            out.append(c)
    return "".join(out)


def _named(pattern: str) -> Callable[[str], str]:
    """Each letter as the character named ``pattern`` with it ("LATIN LETTER SMALL CAPITAL
    {}"), where Unicode has one; other letters stay."""

    def trick(w: str) -> str:
        out = []
        for c in w:
            try:
                out.append(unicodedata.lookup(pattern.format(c.upper())))
            except KeyError:
                out.append(c)
        return "".join(out)

    return trick


def _hooked(w: str) -> str:
    # Latin letters with hooks, strokes and tails that pass for plain ones (no decomposition)
    return w.translate(str.maketrans("bcdfghklpqtvyzio", "ɓƈɗƒɠɦƙɭƥʠƭʋƴȥɨø"))


def _mid(w: str) -> int:
    return max(1, len(w) // 2)


def _accent(w: str) -> str:
    # a combining acute accent (NFD) after the first vowel past the first letter
    for i, c in enumerate(w):
        if i and c in "aeiou":
            return w[: i + 1] + "\u0301" + w[i + 1 :]
    return w[:1] + "\u0301" + w[1:]


# name -> (kind, trick)
TRICKS: dict[str, tuple[str, Callable[[str], str]]] = {
    "bold half": ("markup", lambda w: f"**{w[: _mid(w)]}**{w[_mid(w) :]}"),
    "italic letter": ("markup", lambda w: f"{w[:1]}*{w[1:2]}*{w[2:]}"),
    "code half": ("markup", lambda w: f"`{w[: _mid(w)]}`{w[_mid(w) :]}"),
    "entity": ("markup", lambda w: f"{w[:2]}&#{ord(w[2])};{w[3:]}"),
    "hex entity": ("markup", lambda w: f"{w[:1]}&#x{ord(w[1]):x};{w[2:]}"),
    "zero-width space": ("markup", lambda w: f"{w[: _mid(w)]}\u200b{w[_mid(w) :]}"),
    "zero-width joiner": ("markup", lambda w: f"{w[: _mid(w)]}\u200d{w[_mid(w) :]}"),
    "soft hyphen": ("markup", lambda w: f"{w[: _mid(w)]}\u00ad{w[_mid(w) :]}"),
    "combining accent (NFD)": ("markup", _accent),
    "right-to-left override": ("markup", lambda w: f"\u202e{w[::-1]}\u202c"),
    "Cyrillic letters": ("look-alike", _confuse(_CYRILLIC)),
    "Greek letters": ("look-alike", _confuse(_GREEK)),
    "fullwidth": ("look-alike", _fullwidth),
    "math bold": ("look-alike", _math_bold),
    # issue 23, sixth session: Latin letters in disguise (core.agent.spoiler_fold)
    "small capitals": ("look-alike", _named("LATIN LETTER SMALL CAPITAL {}")),
    "letters with hooks": ("look-alike", _hooked),
    "parenthesised letters": ("look-alike", _named("PARENTHESIZED LATIN SMALL LETTER {}")),
    "negative circled": ("look-alike", _named("NEGATIVE CIRCLED LATIN CAPITAL LETTER {}")),
    "regional indicators": ("look-alike", _named("REGIONAL INDICATOR SYMBOL LETTER {}")),
    "math italic": ("look-alike", _named("MATHEMATICAL ITALIC SMALL {}")),
}


def _apply(trick: Callable[[str], str], text: str) -> str:
    """``text`` with the trick applied to each word in braces."""
    return re.sub(r"\{([^}]*)\}", lambda m: trick(m.group(1)), text)


@dataclass(frozen=True)
class Case:
    book: str
    kind: str
    leak: bool
    text: str
    question: str | None = None
    trick: str = ""


CASE_FILES = ("cases.txt", "cases_new.txt")  # the second: written in issue 23's second session
SEM_FILE = "cases_sem.txt"  # issue 23's third session: kept apart (before/after stays comparable)


def cases(books: Iterable[str] | None = None, files: Iterable[str] = CASE_FILES) -> list[Case]:
    """Every case of the case files (tricks expanded), for the given books (default: all)."""
    wanted = set(books) if books is not None else None
    out: list[Case] = []
    lines = [
        line for name in files for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    ]
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(" | ")]
        book, kind, label, text = fields[:4]
        question = fields[4] if len(fields) > 4 else None
        if wanted is not None and book not in wanted:
            continue
        leak = label == "leak"
        if kind != "trick":
            out.append(Case(book, kind, leak, text, question))
            continue
        for name, (trick_kind, trick) in TRICKS.items():
            shown = _apply(trick, text)
            out.append(Case(book, trick_kind, leak, shown, question, name))
    return out


@dataclass
class KindResult:
    leaks: int = 0
    caught: int = 0
    honest: int = 0
    false_alarms: int = 0
    missed: list[str] = field(default_factory=list)
    alarms: list[str] = field(default_factory=list)
    verified: int = 0  # sentences sent to a verification call
    verify_chars: list[int] = field(default_factory=list)  # each call's prompt, in characters
    sentences: int = 0

    @property
    def recall(self) -> float:
        return self.caught / self.leaks if self.leaks else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.honest if self.honest else 0.0


# A verification: (guard, doubtful segment, whether the case is a leak) → the verdict
# (True: supported, False: unsupported, None: no verdict) and the prompt's size in characters.
Verify = Callable[[SpoilerGuard, Segment, bool], tuple[bool | None, int]]


def held(
    guard: SpoilerGuard, sentence: str, verify: Verify | None = None, leak: bool = False
) -> bool:
    return bool(checked(guard, sentence, verify, leak)[0])


def checked(
    guard: SpoilerGuard, sentence: str, verify: Verify | None = None, leak: bool = False
) -> tuple[bool, list[int]]:
    """Whether the sentence is held back, and the prompt sizes of its verification calls. With
    ``verify``, doubtful segments are decided as ``core.agent.loop`` decides them."""
    segments = guard.feed(sentence) + guard.flush()
    hidden = False
    calls: list[int] = []
    for s in segments:
        shown = not s.hidden
        if s.doubtful and verify is not None:
            supported, chars = verify(guard, s, leak)
            calls.append(chars)
            if supported is not None:
                shown = supported
        hidden = hidden or not shown
    return hidden, calls


def oracle(question: str = "") -> Verify:
    """A verifier that answers as the evaluation's labels say (a model that judges every
    doubtful sentence right: the best a verification call can do), with the size of the
    prompt the real call would send."""
    from core.agent.spoiler_verify import verification_prompt

    def verify(guard: SpoilerGuard, segment: Segment, leak: bool) -> tuple[bool | None, int]:
        system, prompt = verification_prompt(guard, segment.text, question)
        return not leak, len(system) + len(prompt)

    return verify


def evaluate_kinds(
    db: pw.SqliteDatabase,
    book_ids: dict[str, int],
    make_guard: Callable[[SpoilerIndex, EvalBook, str], SpoilerGuard] | None = None,
    verify: Callable[[str], Verify] | None = None,
    files: Iterable[str] = CASE_FILES,
    original: bool = True,
    meaning: BookMeaning | None = None,
) -> dict[str, KindResult]:
    """The set by kind: "original" (the four files of issue 16), and the kinds of the case
    files; books missing from ``book_ids`` are left out. ``verify(question)`` makes the
    verification of doubtful sentences (none: the lexical check alone). ``meaning``: the
    books' vectors for the test by meaning (``load_meanings``; none: no such test)."""
    make = make_guard or (
        lambda index, book, question: SpoilerGuard(
            index, read_to=book.read_to, question=question, meaning=meaning
        )
    )
    results: dict[str, KindResult] = {}
    indexes = {name: SpoilerIndex.build(db, bid) for name, bid in book_ids.items()}

    def one(kind: str, book: EvalBook, leak: bool, text: str, question: str) -> None:
        r = results.setdefault(kind, KindResult())
        guard = make(indexes[book.name], book, question)
        hit, calls = checked(guard, text, verify(question) if verify else None, leak)
        r.sentences += 1
        r.verified += len(calls)
        r.verify_chars += calls
        if leak:
            r.leaks += 1
            r.caught += hit
            if not hit:
                r.missed.append(f"{book.name}: {text}")
        else:
            r.honest += 1
            r.false_alarms += hit
            if hit:
                r.alarms.append(f"{book.name}: {text}")

    for item in each_sentence(book_ids, files, original):
        one(*item)
    return results


def each_sentence(
    book_ids: dict[str, int], files: Iterable[str] = CASE_FILES, original: bool = True
) -> Iterator[tuple[str, EvalBook, bool, str, str]]:
    """The set's sentences as (kind, book, leak, text, question): the four files of issue 16
    ("original", unless ``original`` is False), then the case files; books missing from
    ``book_ids`` are left out."""
    for book in BOOKS:
        if book.name not in book_ids or not original:
            continue
        for part in ("", "_heldout"):
            for text in sentences(f"{book.name}{part}_leaks"):
                yield "original", book, True, text, book.question
            for text in sentences(f"{book.name}{part}_honest"):
                yield "original", book, False, text, book.question
    all_books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    for case in cases(book_ids, files):
        book = all_books[case.book]
        yield case.kind, book, case.leak, case.text, case.question or book.question


def total(results: dict[str, KindResult]) -> KindResult:
    out = KindResult()
    for r in results.values():
        out.leaks += r.leaks
        out.caught += r.caught
        out.honest += r.honest
        out.false_alarms += r.false_alarms
        out.verified += r.verified
        out.verify_chars += r.verify_chars
        out.sentences += r.sentences
    return out
