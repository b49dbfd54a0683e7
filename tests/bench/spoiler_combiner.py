"""A learned combiner for the spoiler check, measured (issue 23, fifth session): a logistic
regression over the layers' scores and the cues (core.agent.spoiler_cues), trained on the tune
files only (the issue-16 files and cases.txt), its threshold chosen there, judged on
cases_new.txt and cases_sem.txt. It decides only sentences the check shows (no model): held =
the check holds it, or the combiner's probability is over the threshold.

It is not in the product: see the figures it prints against the check alone (the report of
issue 23's fifth session). Plain numpy, the weights printed as a few numbers.

Run: .venv/bin/python tests/bench/spoiler_combiner.py
(the library of tests/bench/bench_spoiler_meaning.py.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bench_spoiler_meaning import library, ready

from core.agent import spoiler_cues
from core.agent.spoiler_semantic import STATIC, BookMeaning
from core.agent.spoilers import _SO_FAR, SpoilerGuard, SpoilerIndex, visible_text
from core.store.library import Library
from tests.core.agent.spoiler_eval import BOOKS, EXTRA_BOOKS, SEM_FILE, cases, checked, sentences

NAMES = (
    "gap read later window later-read added pairs-later pairs-read short doubtful outcome "
    "future so-far weak asks-ahead"
).split()


@dataclass
class Row:
    book: str
    leak: bool
    held: bool  # by the check (cues on), no model
    x: list[float]
    text: str = ""


def features(guard: SpoilerGuard, text: str, question: str) -> list[float]:
    shown = visible_text(text)
    terms = guard.spoiler_terms(text)
    support = guard.support(text)
    found = guard._gap(text)
    s = support
    return [
        found[0] if found else 0.0,
        s.read if s else 0.0,
        s.later if s else 0.0,
        s.window if s else 0.0,
        (s.later - s.read) if s else 0.0,
        min(3, len(s.added)) / 3 if s else 0.0,
        min(5, s.pairs_later) / 5 if s else 0.0,
        min(10, s.pairs_read) / 10 if s else 0.0,
        float(s is None),
        float(s is not None and s.doubtful()),
        float(spoiler_cues.outcome(shown)),
        float(spoiler_cues.future(shown)),
        float(_SO_FAR.search(shown) is not None),
        float(bool(terms) and all(t.weak for t in terms)),
        float(spoiler_cues.asks_ahead(question)),
    ]


def collect(lib: Library, ids: dict[str, int], meaning: BookMeaning) -> dict[str, list[Row]]:
    books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    indexes = {name: SpoilerIndex.build(lib.db, i) for name, i in ids.items()}
    out: dict[str, list[Row]] = {"tune": [], "judge": []}

    def one(part: str, name: str, leak: bool, text: str, question: str) -> None:
        def guard() -> SpoilerGuard:
            book = books[name]
            return SpoilerGuard(
                indexes[name], read_to=book.read_to, question=question, meaning=meaning
            )

        held = checked(guard(), text)[0]
        out[part].append(Row(name, leak, held, features(guard(), text, question), text))

    for book in BOOKS:
        for piece in ("", "_heldout"):
            for label in ("leaks", "honest"):
                for s in sentences(f"{book.name}{piece}_{label}"):
                    one("tune", book.name, label == "leaks", s, book.question)
    for part, files in (("tune", ("cases.txt",)), ("judge", ("cases_new.txt", SEM_FILE))):
        for c in cases(ids, files):
            if c.kind in ("plain", "original"):
                one(part, c.book, c.leak, c.text, c.question or books[c.book].question)
    return out


def train(rows: list[Row], l2: float = 0.01) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([r.x for r in rows])
    y = np.array([r.leak for r in rows], float)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mu) / sd])
    w = np.zeros(z.shape[1])
    for _ in range(4000):
        p = 1 / (1 + np.exp(-z @ w))
        w -= 0.5 * (z.T @ (p - y) / len(y) + l2 * np.r_[0.0, w[1:]])
    return w, mu, sd


def probabilities(rows: list[Row], w: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    x = np.array([r.x for r in rows])
    z = np.hstack([np.ones((len(x), 1)), (x - mu) / sd])
    return 1 / (1 + np.exp(-z @ w))


def score(rows: list[Row], held: list[bool]) -> tuple[int, int, int, int]:
    leaks = [h for r, h in zip(rows, held, strict=True) if r.leak]
    honest = [h for r, h in zip(rows, held, strict=True) if not r.leak]
    return sum(leaks), len(leaks), sum(honest), len(honest)


def show(label: str, figures: tuple[int, int, int, int]) -> str:
    c, n, f, h = figures
    return f"{label}: caught {c}/{n} = {c / n:.1%}, false alarms {f}/{h} = {f / h:.1%}"


def main() -> None:
    lib, ids = library()
    meaning = ready(lib, ids, (STATIC,))
    rows = collect(lib, ids, meaning)
    tune = rows["tune"]
    w, mu, sd = train(tune)
    print("  weights (standardised features):")
    print("    " + ", ".join(f"{n} {v:+.2f}" for n, v in zip(("bias", *NAMES), w, strict=True)))
    base = {part: [r.held for r in rs] for part, rs in rows.items()}
    print("  the check alone (cues on), plain + original kinds:")
    for part, rs in rows.items():
        print("    " + show(part, score(rs, base[part])))
    limit = score(tune, base["tune"])[2]  # no more false alarms on tune than the check alone
    best = None
    for th in np.arange(0.50, 0.99, 0.02):
        held = [
            h or p > th for h, p in zip(base["tune"], probabilities(tune, w, mu, sd), strict=True)
        ]
        c, _, f, _ = score(tune, held)
        if f <= limit and (best is None or c > best[1]):
            best = (float(th), c)
    if best is None:
        print("  no threshold keeps the tune false alarms")
        return
    th = best[0]
    print(f"  the check OR the combiner (threshold {th:.2f}, chosen on tune):")
    for part, rs in rows.items():
        held = [h or p > th for h, p in zip(base[part], probabilities(rs, w, mu, sd), strict=True)]
        print("    " + show(part, score(rs, held)))
        for r, h, b in zip(rs, held, base[part], strict=True):
            if h and not b:
                what = "caught" if r.leak else "new false alarm"
                print(f"      {what} ({part}): {r.book}: {r.text}")
    lib.close()


if __name__ == "__main__":
    main()
