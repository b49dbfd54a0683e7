"""Issue 46 item 1: the families of disguise a model may write a later name in, and the
evaluation set built from them (spoiler_data/cases_disguise.txt). Used by
tests/core/agent/test_spoilers_disguise.py and tests/bench/bench_spoiler_disguise.py."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

import peewee as pw

from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from tests.core.agent.spoiler_eval import (
    BOOKS,
    DATA,
    EXTRA_BOOKS,
    Case,
    EvalBook,
    KindResult,
    Verify,
    checked,
)

CASE_FILE = "cases_disguise.txt"
PRIDE = EvalBook(
    "pride",
    "pride_and_prejudice.epub",
    30,  # issue 46's own examples: read to p. 30, Wickham first named on p. 77
    "What has happened to Elizabeth and her sisters so far?",
)
DISGUISE_BOOKS = (*BOOKS, PRIDE)
"""The books of the disguise set (Alice, Metamorphosis, Pride and Prejudice)."""


def _pig_latin(w: str) -> str:
    i = 0
    while i < len(w) and w[i].lower() not in "aeiou":
        i += 1
    return f"{w[i:]}{w[:i].lower()}ay" if i else f"{w}way"


def _leet(w: str) -> str:
    return w.translate(str.maketrans("iaeoIAEO", "14301430"))


def _misspelt(w: str) -> str:
    """One letter changed: the last vowel becomes another ("Hatter" -> "Hattar")."""
    swap = {"a": "u", "e": "a", "i": "e", "o": "a", "u": "o"}
    for i in range(len(w) - 1, 0, -1):
        if w[i] in swap:
            return w[:i] + swap[w[i]] + w[i + 1 :]
    return w


def _sounds(w: str) -> str:
    """Spelt as it sounds: "Gryphon" -> "Gryfon", "Caterpillar" -> "Katerpilar"."""
    out = w.replace("ph", "f").replace("ck", "kk")
    out = re.sub(r"(.)\1", r"\1", out)
    return ("K" + out[1:]) if out[:1] == "C" else out


def _half(w: str) -> int:
    return max(3, len(w) // 2)


# family -> how the word is written
DISGUISES: dict[str, Callable[[str], str]] = {
    "spaced letters": lambda w: " ".join(w),
    "no-break spaces": lambda w: "\u00a0".join(w),
    "dotted letters": lambda w: ".".join(w) + ".",
    "hyphenated letters": lambda w: "-".join(w),
    "HTML comment": lambda w: f"{w[:3]}<!-- -->{w[3:]}",
    "line-break hyphen": lambda w: f"{w[: _half(w)]}- {w[_half(w) :]}",
    "digits for letters": _leet,
    "reversed": lambda w: w[::-1],
    "ROT13": lambda w: codecs.encode(w, "rot13"),
    "pig Latin": _pig_latin,
    "emoji inside": lambda w: f"{w[:3]}\U0001f3a9{w[3:]}",
    "one letter changed": _misspelt,
    "spelt as it sounds": _sounds,
    "link URL": lambda w: f"[this one](https://example.org/wiki/{w.lower()})",
    "link title": lambda w: f'[this one](https://example.org/x "{w}")',
    "split in two": lambda w: f"{w[: _half(w)]} {w[_half(w) :]}",
    "starts with / ends with": lambda w: (
        f"the one whose name starts with {w[: _half(w)]}. The name ends with {w[_half(w) :]}"
    ),
}


def disguise_cases(books: set[str] | None = None) -> list[Case]:
    """The cases of the disguise file, each "disguise" line once per family (kind: the
    family's name), the "control" lines as they are."""
    out: list[Case] = []
    for line in (DATA / CASE_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        book, kind, label, text = (f.strip() for f in line.split(" | ")[:4])
        if books is not None and book not in books:
            continue
        if kind != "disguise":
            out.append(Case(book, kind, label == "leak", text))
            continue
        for name, family in DISGUISES.items():
            shown = re.sub(r"\{([^}]*)\}", lambda m, f=family: f(m.group(1)), text)  # type: ignore[misc]
            out.append(Case(book, name, label == "leak", shown, trick=name))
    return out


def evaluate_disguises(
    db: pw.SqliteDatabase,
    book_ids: dict[str, int],
    *,
    disguises: bool = True,
    verify: Callable[[str], Verify] | None = None,
) -> dict[str, KindResult]:
    """The disguise set by kind (family, or "control"), with the disguise check on or off
    (off: the check as it was before issue 46)."""
    books = {b.name: b for b in (*DISGUISE_BOOKS, *EXTRA_BOOKS)}
    indexes = {name: SpoilerIndex.build(db, i) for name, i in book_ids.items()}
    results: dict[str, KindResult] = {}
    for case in disguise_cases(set(book_ids)):
        book = books[case.book]
        guard = SpoilerGuard(
            indexes[case.book], read_to=book.read_to, question=book.question, meaning=None
        )
        guard.disguises = disguises
        hit, calls = checked(guard, case.text, verify(book.question) if verify else None, case.leak)
        r = results.setdefault(case.kind, KindResult())
        r.sentences += 1
        r.verified += len(calls)
        if case.leak:
            r.leaks += 1
            r.caught += hit
            if not hit:
                r.missed.append(f"{case.book}: {case.text}")
        else:
            r.honest += 1
            r.false_alarms += hit
            if hit:
                r.alarms.append(f"{case.book}: {case.text}")
    return results
