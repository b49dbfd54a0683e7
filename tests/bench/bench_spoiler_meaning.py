"""The spoiler check's test by meaning (issue 23, third session: core.agent.spoiler_semantic):
the evaluation set before (lexical alone) and after (with the book's chunk vectors), by kind
and by book, with no model and with a model that verifies doubtful sentences right (the
oracle), and what it costs per sentence.

The margin (spoiler_semantic.MARGINS) was chosen on the issue-16 files and cases.txt ("tune")
and is judged on cases_new.txt and cases_sem.txt ("judge"); cases_sem.txt (40 plain-word
sentences written for this session) is reported apart so that the figures on the older set
stay comparable with earlier sessions.

Issue 23, fourth session: the same test with the sentence encoder's chunk vectors (MiniLM,
core.search.sentence_vectors) next to WordLlama's: lexical -> WordLlama -> MiniLM. MiniLM's
margin is chosen on the tune files (the sweep is printed) and judged on the rest.

The library (the books, both kinds of chunk vectors: MiniLM's take minutes) is made once and
kept in the spoiler books' cache folder (``meaning-library``); delete it to make it again.

Run: .venv/bin/python tests/bench/bench_spoiler_meaning.py
(A Christmas Carol and Sherlock Holmes come in when tests/bench/spoiler_books.py built them.)
"""

from __future__ import annotations

import json
import time

from common import FIXTURES, machine, median, percentile, report
from spoiler_books import BOOKS as SPOILER_BOOKS
from spoiler_books import CACHE

from core.agent.spoiler_semantic import MARGINS, MINILM, STATIC, BookMeaning
from core.agent.spoilers import SpoilerGuard, SpoilerIndex
from core.books.importer import import_book
from core.paths import resolve_paths
from core.search.sentence_vectors import SentenceVectors
from core.search.vectors import BookVectors
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    CASE_FILES,
    EXTRA_BOOKS,
    SEM_FILE,
    KindResult,
    cases,
    evaluate_kinds,
    oracle,
    total,
)


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def line(label: str, *results: KindResult) -> str:
    caught = " -> ".join(f"{pct(r.caught, r.leaks):>15}" for r in results)
    alarms = " -> ".join(f"{pct(r.false_alarms, r.honest):>13}" for r in results)
    return f"    {label:<22} caught {caught}   false alarms {alarms}"


Variants = dict[str, BookMeaning | None]


def compare(
    lib: Library, ids: dict[str, int], variants: Variants, label: str, **kw: object
) -> None:
    """Lexical -> WordLlama -> MiniLM by kind and in all, for each verification (none, the
    oracle)."""
    for verify_label, verify in (("no model", None), ("oracle verifier", oracle)):
        runs = [
            evaluate_kinds(lib.db, ids, verify=verify, meaning=m, **kw)  # type: ignore[arg-type]
            for m in variants.values()
        ]
        print(f"  {label}, {verify_label} ({' -> '.join(variants)}):")
        for kind in runs[-1]:
            print(line(kind, *(r[kind] for r in runs)))
        print(line("all", *(total(r) for r in runs)))
        if verify is None and label.startswith("judge"):
            for name, run in zip(variants, runs, strict=True):
                for kind, r in run.items():
                    for m in r.missed:
                        print(f"      {name} missed ({kind}): {m}")
                    for m in r.alarms:
                        print(f"      {name} false alarm ({kind}): {m}")


def sweep(lib: Library, ids: dict[str, int], minilm: BookMeaning) -> None:
    """MiniLM's margin on the tune files alone (no model): caught and false alarms."""
    print("  MiniLM margin on tune (issue-16 files + cases.txt), no model:")
    for margin in (0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.20):
        r = total(evaluate_kinds(lib.db, ids, files=("cases.txt",), meaning=minilm.retuned(margin)))
        mark = " (MARGINS)" if margin == MARGINS[MINILM] else ""
        print(
            f"    {margin:.2f}: caught {pct(r.caught, r.leaks)}, "
            f"false alarms {pct(r.false_alarms, r.honest)}{mark}"
        )


def exemptions(lib: Library, ids: dict[str, int], variants: Variants) -> None:
    """Before -> after the meaning test's exemptions (SpoilerGuard.meaning_exemptions: a
    sentence scoped to the pages read, or whose key words are all in one scene read), no
    model, per model: chosen on tune, judged on the rest."""
    sets = {
        "tune": {"files": ("cases.txt",)},
        "judge": {"files": ("cases_new.txt", SEM_FILE), "original": False},
    }
    for set_label, kw in sets.items():
        for label, source in variants.items():
            if source is None:
                continue
            runs = []
            for on in (False, True):
                SpoilerGuard.meaning_exemptions = on
                runs.append(evaluate_kinds(lib.db, ids, meaning=source, **kw))  # type: ignore[arg-type]
            print(f"  exemptions off -> on, {label}, {set_label}, no model:")
            for kind in runs[-1]:
                print(line(kind, *(r[kind] for r in runs)))
            print(line("all", *(total(r) for r in runs)))
            for kind, r in runs[0].items():
                for m in set(r.alarms) - set(runs[1][kind].alarms):
                    print(f"      alarm gone ({kind}): {m}")
                for m in set(r.missed) ^ set(runs[1][kind].missed):
                    print(f"      catch changed ({kind}): {m}")
    SpoilerGuard.meaning_exemptions = True


def by_book(lib: Library, ids: dict[str, int], variants: Variants) -> None:
    files = (*CASE_FILES, SEM_FILE)
    print(f"  by book, plain words and all kinds, no model, all files ({' -> '.join(variants)}):")
    for name, book_id in ids.items():
        one = {name: book_id}
        runs = [evaluate_kinds(lib.db, one, files=files, meaning=m) for m in variants.values()]
        if "plain" in runs[-1]:
            print(line(f"{name}/plain", *(r["plain"] for r in runs)))
        print(line(f"{name}/all", *(total(r) for r in runs)))


def cost(lib: Library, ids: dict[str, int], variants: Variants) -> None:
    """Per sentence, interleaved (order swapped each round, after a warm-up round): the whole
    check with each variant, and the test by meaning alone (one embedding and a dot
    product) with each model; then what a first question waits for with nothing loaded."""
    books = {b.name: b for b in (*BOOKS, *EXTRA_BOOKS)}
    texts = [(c.book, c.text) for c in cases(ids, (*CASE_FILES, SEM_FILE)) if not c.trick]
    indexes = {name: SpoilerIndex.build(lib.db, book_id) for name, book_id in ids.items()}
    times: dict[str, list[float]] = {}
    order = list(variants.items())
    for round_ in range(3):
        for name, text in texts:
            read_to = books[name].read_to
            for label, source in order if round_ % 2 else order[::-1]:
                guard = SpoilerGuard(
                    indexes[name], read_to=read_to, question="What happens?", meaning=source
                )
                start = time.perf_counter()
                guard.check(text)
                if round_:
                    times.setdefault(f"check, {label}", []).append(
                        (time.perf_counter() - start) * 1000
                    )
                if source is None:
                    continue
                guard.later_in_meaning(text)  # the question's vector, made once per answer
                start = time.perf_counter()
                guard.later_in_meaning(text + " ")  # a new sentence: not remembered
                if round_:
                    times.setdefault(f"meaning alone, {label}", []).append(
                        (time.perf_counter() - start) * 1000
                    )
    for label, t in times.items():
        report(
            f"per sentence, {label}",
            f"median {median(t):.2f} ms, p95 {percentile(t, 95):.2f} ms",
            "+ a few ms",
            True,
        )
    fresh = BookMeaning()  # a first question: the book's vectors not loaded in this process
    name, book_id = next(iter(ids.items()))
    start = time.perf_counter()
    guard = SpoilerGuard(indexes[name], read_to=books[name].read_to, question="", meaning=fresh)
    held = guard.later_in_meaning("Later she grows so tall that her head is far above the trees.")
    first = (time.perf_counter() - start) * 1000
    report(
        "first question: guard + test by meaning, vectors not loaded",
        f"{first:.2f} ms (lexical decision: {'held' if held else 'not held'})",
        "no wait",
        first < 5,
    )
    for label, source in variants.items():
        if source is None:
            continue
        again = BookMeaning(source.models)
        start = time.perf_counter()
        again.wait(lib.db, book_id)
        loaded = (time.perf_counter() - start) * 1000
        report(
            f"a book's vectors loaded ({label}), in the background", f"{loaded:.0f} ms", "-", True
        )


def library() -> tuple[Library, dict[str, int]]:
    """The cached library: the books, their static and MiniLM chunk vectors (made once)."""
    home = CACHE / "meaning-library" / "home"
    known = home.parent / "ids.json"
    lib = Library.open(resolve_paths(home))
    ids: dict[str, int] = json.loads(known.read_text()) if known.is_file() else {}
    for book in (*BOOKS, *EXTRA_BOOKS):
        path = FIXTURES / "books" / book.file if book in BOOKS else SPOILER_BOOKS / book.file
        if book.name in ids or not path.is_file():
            continue
        ids[book.name] = book_id = import_book(lib, path).book.id
        start = time.perf_counter()
        BookVectors(lib.db).index_book(book_id)
        SentenceVectors(lib.db).index_book(book_id)
        print(f"  {book.name}: chunk vectors made in {time.perf_counter() - start:.0f} s")
        known.write_text(json.dumps(ids))
    return lib, ids


def ready(lib: Library, ids: dict[str, int], models: tuple[str, ...]) -> BookMeaning:
    meanings = BookMeaning(models)
    for book_id in ids.values():
        meanings.wait(lib.db, book_id)
        found = meanings.get(lib.db, book_id)
        if found is None or found.model != models[0]:
            raise RuntimeError(f"book {book_id}: no {models[0]} vectors")
    return meanings


def main() -> None:
    print(f"bench_spoiler_meaning on {machine()}")
    lib, ids = library()
    print(f"  books: {', '.join(ids)}")
    variants: Variants = {
        "lexical": None,
        "WordLlama": ready(lib, ids, (STATIC,)),
        "MiniLM": ready(lib, ids, (MINILM,)),
    }
    sweep(lib, ids, variants["MiniLM"])  # type: ignore[arg-type]
    exemptions(lib, ids, variants)
    compare(lib, ids, variants, "tune (issue-16 files + cases.txt)", files=("cases.txt",))
    compare(
        lib,
        ids,
        variants,
        "judge (cases_new.txt + cases_sem.txt)",
        files=("cases_new.txt", SEM_FILE),
        original=False,
    )
    compare(lib, ids, variants, "old set (all before this session)")
    compare(lib, ids, variants, "new file cases_sem.txt", files=(SEM_FILE,), original=False)
    by_book(lib, ids, variants)
    cost(lib, ids, variants)
    lib.close()


if __name__ == "__main__":
    main()
