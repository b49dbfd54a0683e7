"""The spoiler check's cues in a sentence's own words (issue 23, fifth session:
core.agent.spoiler_cues): the evaluation set before (``SpoilerGuard.cues = False``) and after,
by kind, by book, tune vs judge, with no model and with a model that verifies doubtful
sentences right (the oracle); what changed, sentence by sentence; and the check's cost per
sentence before and after, interleaved, with the book's WordLlama vectors loaded (the test by
meaning on: the path the cues change).

Tune: the issue-16 files and cases.txt (the cues and their thresholds were chosen there).
Judge: cases_new.txt and cases_sem.txt (printed beside, not used to choose).

Run: .venv/bin/python tests/bench/bench_spoiler_cues.py
(the library of tests/bench/bench_spoiler_meaning.py: the four books and their vectors.)
"""

from __future__ import annotations

import time

from bench_spoiler_meaning import library, ready
from common import machine, median, percentile, report

from core.agent.spoiler_semantic import STATIC, BookMeaning
from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    CASE_FILES,
    EXTRA_BOOKS,
    SEM_FILE,
    EvalBook,
    KindResult,
    cases,
    evaluate_kinds,
    oracle,
    total,
)

SETS: dict[str, dict[str, object]] = {
    "tune (issue-16 files + cases.txt)": {"files": ("cases.txt",)},
    "judge (cases_new.txt + cases_sem.txt)": {
        "files": ("cases_new.txt", SEM_FILE),
        "original": False,
    },
    "all": {"files": (*CASE_FILES, SEM_FILE)},
}


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def line(label: str, before: KindResult, after: KindResult) -> str:
    return (
        f"    {label:<22} caught {pct(before.caught, before.leaks):>15} -> "
        f"{pct(after.caught, after.leaks):>15}   false alarms "
        f"{pct(before.false_alarms, before.honest):>13} -> "
        f"{pct(after.false_alarms, after.honest):>13}"
    )


def run(
    lib: Library, ids: dict[str, int], meaning: BookMeaning, cues: bool, **kw: object
) -> dict[str, KindResult]:
    def make(index: SpoilerIndex, book: EvalBook, question: str) -> SpoilerGuard:
        guard = SpoilerGuard(index, read_to=book.read_to, question=question, meaning=meaning)
        guard.cues = cues
        return guard

    return evaluate_kinds(lib.db, ids, make, **kw)  # type: ignore[arg-type]


def figures(lib: Library, ids: dict[str, int], meaning: BookMeaning) -> None:
    for label, kw in SETS.items():
        for verify_label, verify in (("no model", None), ("oracle verifier", oracle)):
            before = run(lib, ids, meaning, False, verify=verify, **kw)
            after = run(lib, ids, meaning, True, verify=verify, **kw)
            print(f"  {label}, {verify_label} (cues off -> on):")
            for kind in after:
                print(line(kind, before[kind], after[kind]))
            print(line("all", total(before), total(after)))
            b, a = total(before), total(after)
            print(f"    sentences verified: {b.verified} -> {a.verified} of {a.sentences}")
            if verify is None and label != "all":
                for kind in after:
                    for m in sorted(set(after[kind].missed) - set(before[kind].missed)):
                        print(f"      newly missed ({kind}): {m}")
                    for m in sorted(set(before[kind].missed) - set(after[kind].missed)):
                        print(f"      newly caught ({kind}): {m}")
                    for m in sorted(set(after[kind].alarms) - set(before[kind].alarms)):
                        print(f"      new false alarm ({kind}): {m}")
                    for m in sorted(set(before[kind].alarms) - set(after[kind].alarms)):
                        print(f"      false alarm gone ({kind}): {m}")
    print("  by book, no model, all files (cues off -> on):")
    for name, book_id in ids.items():
        one = {name: book_id}
        kw = SETS["all"]
        before = run(lib, one, meaning, False, **kw)
        after = run(lib, one, meaning, True, **kw)
        if "plain" in after:
            print(line(f"{name}/plain", before["plain"], after["plain"]))
        print(line(f"{name}/all", total(before), total(after)))


def sweep(lib: Library, ids: dict[str, int], meaning: BookMeaning) -> None:
    """The cues' margins, no model: tune (where they were chosen) and judge (printed beside)."""
    from core.agent import spoiler_cues

    kept = spoiler_cues.OUTCOME_MARGIN, spoiler_cues.FUTURE_MARGIN
    print("  margins (outcome, future): tune | judge, no model, all kinds")
    for outcome in (-0.02, 0.0, 0.02, 0.05):
        for future in (0.0, 0.03, 0.05, 0.07, 0.10):
            spoiler_cues.OUTCOME_MARGIN, spoiler_cues.FUTURE_MARGIN = outcome, future
            figures = []
            for label in list(SETS)[:2]:
                r = total(run(lib, ids, meaning, True, **SETS[label]))
                figures.append(f"{pct(r.caught, r.leaks)}, {pct(r.false_alarms, r.honest)}")
            mark = " (kept)" if (outcome, future) == kept else ""
            print(f"    {outcome:+.2f} {future:.2f}: {' | '.join(figures)}{mark}")
    spoiler_cues.OUTCOME_MARGIN, spoiler_cues.FUTURE_MARGIN = kept


def cost(lib: Library, ids: dict[str, int], meaning: BookMeaning | None) -> None:
    """The whole check per sentence, cues off and on, interleaved (the order swapped each
    round, after a warm-up round), on every sentence of the case files but the tricks; with
    the book's WordLlama vectors loaded, or none (``meaning`` None: lexical)."""
    books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    texts = [(c.book, c.text) for c in cases(ids, (*CASE_FILES, SEM_FILE)) if not c.trick]
    indexes = {name: SpoilerIndex.build(lib.db, book_id) for name, book_id in ids.items()}
    times: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(4):
        for name, text in texts:
            for cues in (False, True) if round_ % 2 else (True, False):
                guard = SpoilerGuard(
                    indexes[name],
                    read_to=books[name].read_to,
                    question="What happens?",
                    meaning=meaning,
                )
                guard.cues = cues
                guard.later_in_meaning("What happens?")  # the vectors at hand, as mid-answer
                start = time.perf_counter()
                guard.check(text + " " * round_)  # a new text each round: nothing remembered
                if round_:
                    times[cues].append((time.perf_counter() - start) * 1000)
    vectors = "WordLlama loaded" if meaning is not None else "no vectors (lexical)"
    for cues, label in ((False, "before (cues off)"), (True, "after (cues on)")):
        t = times[cues]
        report(
            f"check per sentence, {vectors}, {label}",
            f"median {median(t):.2f} ms, p95 {percentile(t, 95):.2f} ms",
            "< 1 ms median",
            median(t) < 1,
        )


def main() -> None:
    print(f"bench_spoiler_cues on {machine()}")
    lib, ids = library()
    print(f"  books: {', '.join(ids)}")
    meaning = ready(lib, ids, (STATIC,))
    figures(lib, ids, meaning)
    sweep(lib, ids, meaning)
    cost(lib, ids, meaning)
    cost(lib, ids, None)
    lib.close()


if __name__ == "__main__":
    main()
