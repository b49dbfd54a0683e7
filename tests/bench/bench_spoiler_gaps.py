"""The spoiler check before and after a change given as a git revision, in one run (issue 23,
sixth session: look-alike letters folded from Unicode's own data, names used once in a book,
plain-word leaks sent for verification, A Christmas Carol's misses).

For each set (tune: the issue-16 files and cases.txt; judge: cases_new.txt and cases_sem.txt)
and each kind and book: leaks caught and false alarms with no model and with a model that
verifies doubtful sentences right (the oracle); how the leaks end (held, doubtful, or shown
and not doubtful: a connected model never sees those); how many verification calls; and the
check's cost per sentence, old and new interleaved, with the book's WordLlama vectors loaded.

"Before" is the check (core/agent/spoiler*.py) at a git revision, loaded as a package of its
own next to today's code:

    .venv/bin/python tests/bench/bench_spoiler_gaps.py --before 94b52df

(the library of tests/bench/bench_spoiler_meaning.py: the four books and their vectors.)
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from bench_spoiler_meaning import library, ready
from common import ROOT, machine, median, percentile, report

from core.agent.spoiler_semantic import STATIC, BookMeaning
from tests.core.agent.spoiler_eval import BOOKS, EXTRA_BOOKS, SEM_FILE, EvalBook, cases, sentences

SETS: dict[str, tuple[tuple[str, ...], bool]] = {  # files, with the issue-16 files
    "tune": (("cases.txt",), True),
    "judge": (("cases_new.txt", SEM_FILE), False),
    "all files": (("cases.txt", "cases_new.txt", SEM_FILE), True),  # the figures of earlier notes
}
ALL_BOOKS = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}


def load_before(rev: str) -> ModuleType:
    """The check's modules at ``rev`` as the package ``spoil_before`` (imports rewritten)."""
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, "core/agent/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    folder = Path(tempfile.mkdtemp()) / "spoil_before"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for path in names:
        name = Path(path).name
        if not name.startswith("spoiler"):
            continue
        text = subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        text = text.replace("core.agent.spoiler", "spoil_before.spoiler")
        text = text.replace("from core.agent import spoiler", "from spoil_before import spoiler")
        (folder / name).write_text(text)
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module("spoil_before.spoilers")


@dataclass
class Tally:
    leaks: int = 0
    caught: int = 0  # no model
    caught_oracle: int = 0  # a model verifying doubtful sentences right
    leak_doubtful: int = 0  # a leak not held but sent for verification
    leak_unseen: int = 0  # a leak shown and not doubtful: no model ever sees it
    honest: int = 0
    alarms: int = 0
    alarms_oracle: int = 0
    calls: int = 0  # verification calls (doubtful segments)
    sentences: int = 0
    missed: list[str] = field(default_factory=list)
    alarm_texts: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def items(files: tuple[str, ...], original: bool, books: Iterable[str]) -> list[tuple]:
    """(book, kind, leak, text, question) of a set."""
    out: list[tuple] = []
    wanted = set(books)
    for book in BOOKS:
        if original and book.name in wanted:
            for part in ("", "_heldout"):
                for label, leak in (("leaks", True), ("honest", False)):
                    for s in sentences(f"{book.name}{part}_{label}"):
                        out.append((book.name, "original", leak, s, book.question))
    for c in cases(wanted, files):
        out.append((c.book, c.kind, c.leak, c.text, c.question or ALL_BOOKS[c.book].question))
    return out


def evaluate(mod: ModuleType, indexes: dict[str, Any], meaning: BookMeaning, rows: list[tuple]):
    tallies: dict[tuple[str, str], Tally] = {}
    for book, kind, leak, text, question in rows:
        b: EvalBook = ALL_BOOKS[book]
        guard = mod.SpoilerGuard(
            indexes[book], read_to=b.read_to, question=question, meaning=meaning
        )
        segments = guard.feed(text) + guard.flush()
        hidden = any(s.hidden for s in segments)
        sure = any(s.hidden and not s.doubtful for s in segments)
        doubtful = sum(1 for s in segments if s.doubtful)
        t = tallies.setdefault((book, kind), Tally())
        t.sentences += 1
        t.calls += doubtful
        if leak:
            t.leaks += 1
            t.caught += hidden
            t.caught_oracle += sure or doubtful > 0
            if not hidden:
                t.leak_doubtful += doubtful > 0
                t.leak_unseen += doubtful == 0
                t.missed.append(f"{book}/{kind}{' (doubtful)' if doubtful else ''}: {text}")
        else:
            t.honest += 1
            t.alarms += hidden
            t.alarms_oracle += sure
            if hidden:
                t.alarm_texts.append(f"{book}/{kind}: {text}")
    return tallies


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def line(label: str, old: Tally, new: Tally) -> str:
    return (
        f"    {label:<24} caught {pct(old.caught, old.leaks):>15} -> {pct(new.caught, new.leaks):>15}"
        f" | false alarms {pct(old.alarms, old.honest):>12} -> {pct(new.alarms, new.honest):>12}"
        f" | oracle caught {old.caught_oracle} -> {new.caught_oracle}, alarms "
        f"{old.alarms_oracle} -> {new.alarms_oracle} | leaks doubtful {old.leak_doubtful} -> "
        f"{new.leak_doubtful}, unseen {old.leak_unseen} -> {new.leak_unseen} | calls "
        f"{old.calls} -> {new.calls} of {new.sentences}"
    )


def grouped(tallies: dict[tuple[str, str], Tally], by: int) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for key, t in tallies.items():
        out.setdefault(key[by], Tally()).add(t)
    return out


def total(tallies: dict[Any, Tally]) -> Tally:
    out = Tally()
    for t in tallies.values():
        out.add(t)
    return out


def figures(lib: Any, ids: dict[str, int], old: ModuleType, new: ModuleType, meaning) -> None:
    old_idx = {n: old.SpoilerIndex.build(lib.db, i) for n, i in ids.items()}
    new_idx = {n: new.SpoilerIndex.build(lib.db, i) for n, i in ids.items()}
    for label, (files, original) in SETS.items():
        rows = items(files, original, ids)
        before = evaluate(old, old_idx, meaning, rows)
        after = evaluate(new, new_idx, meaning, rows)
        print(f"  {label}: before -> after")
        for group, by in (("kind", 1), ("book", 0)):
            b, a = grouped(before, by), grouped(after, by)
            for key in a:
                print(line(f"{group} {key}", b[key], a[key]))
        print(line("all", total(before), total(after)))
        b_plain = {k: v for k, v in before.items() if k[1] == "plain"}
        a_plain = {k: v for k, v in after.items() if k[1] == "plain"}
        for book in ids:
            one_b = {k: v for k, v in b_plain.items() if k[0] == book}
            one_a = {k: v for k, v in a_plain.items() if k[0] == book}
            if one_a:
                print(line(f"plain {book}", total(one_b), total(one_a)))
        tb, ta = total(before), total(after)
        plain_b = {m.replace(" (doubtful)", "") for m in tb.missed}
        plain_a = {m.replace(" (doubtful)", "") for m in ta.missed}
        for m in sorted(plain_a - plain_b):
            print(f"      newly missed: {m}")
        for m in sorted(plain_b - plain_a):
            print(f"      newly caught: {m}")
        for m in sorted(set(ta.missed) - set(tb.missed)):
            if m.replace(" (doubtful)", "") in plain_b:
                print(f"      now sent for verification: {m}")
        for m in sorted(set(ta.alarm_texts) - set(tb.alarm_texts)):
            print(f"      new false alarm: {m}")
        for m in sorted(set(tb.alarm_texts) - set(ta.alarm_texts)):
            print(f"      false alarm gone: {m}")
        if "--misses" in sys.argv:
            for m in ta.missed:
                print(f"      still missed: {m}")
            for m in ta.alarm_texts:
                print(f"      still a false alarm: {m}")


def cost(lib: Any, ids: dict[str, int], old: ModuleType, new: ModuleType, meaning) -> None:
    """The whole check per sentence, old and new interleaved (the order swapped each round,
    after a warm-up round), on every sentence of the case files but the tricks."""
    texts = [(c.book, c.text) for c in cases(ids, ("cases.txt", "cases_new.txt", SEM_FILE))]
    texts = [(b, t) for b, t in texts]
    mods = {"before": old, "after": new}
    idx = {k: {n: m.SpoilerIndex.build(lib.db, i) for n, i in ids.items()} for k, m in mods.items()}
    times: dict[str, list[float]] = {k: [] for k in mods}
    for round_ in range(4):
        for name, text in texts:
            for label in ("before", "after") if round_ % 2 else ("after", "before"):
                guard = mods[label].SpoilerGuard(
                    idx[label][name],
                    read_to=ALL_BOOKS[name].read_to,
                    question="What happens?",
                    meaning=meaning,
                )
                guard.later_in_meaning("What happens?")  # the vectors at hand, as mid-answer
                start = time.perf_counter()
                guard.check(text + " " * round_)  # a new text each round: nothing remembered
                if round_:
                    times[label].append((time.perf_counter() - start) * 1000)
    for label, t in times.items():
        report(
            f"check per sentence, WordLlama loaded, {label}",
            f"median {median(t):.3f} ms, p95 {percentile(t, 95):.2f} ms",
            "< 1 ms median",
            median(t) < 1,
        )


def main() -> None:
    print(f"bench_spoiler_gaps on {machine()}")
    if "--before" not in sys.argv:
        raise SystemExit("Give the revision to compare with: --before REV (e.g. 94b52df).")
    old = load_before(sys.argv[sys.argv.index("--before") + 1])
    new = importlib.import_module("core.agent.spoilers")
    lib, ids = library()
    meaning = ready(lib, ids, (STATIC,))
    figures(lib, ids, old, new, meaning)
    if "--no-cost" not in sys.argv:
        cost(lib, ids, old, new, meaning)
    lib.close()


if __name__ == "__main__":
    main()
