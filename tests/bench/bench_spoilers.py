"""The spoiler check (issues 16 and 23): its cost on a book with about 3 MB of text, the
first question's wait on a freshly imported 16 MiB EPUB, and its figures on the evaluation
set, by kind.

Targets: a few ms per sentence (p95 < 5 ms), building a book's index well under 100 ms (it is
cached per book), no wait for the first question after an import, leaks caught >= 95 % and
false alarms <= 2 % in every kind (issue 23).
Run: .venv/bin/python tests/bench/bench_spoilers.py [--before OLD_SPOILERS_PY]
(``--before``: the figures and the cost per sentence before and after, in one run; see
tests/bench/spoiler_before_after.py.)
The evaluation uses the fixture books, and A Christmas Carol and The Adventures of Sherlock
Holmes when tests/bench/spoiler_books.py has built them into its cache folder.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from common import FIXTURES, machine, median, percentile, report
from spoiler_books import BOOKS as SPOILER_BOOKS

from core.agent.spoilers import SpoilerGuard, SpoilerIndex, SpoilerIndexCache, prepare_book
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.agent.spoiler_eval import (
    BOOKS,
    EXTRA_BOOKS,
    combined,
    evaluate,
    evaluate_kinds,
    oracle,
    sentences,
    total,
)
from tests.core.agent.spoiler_prefix_eval import PrefixResult, prefix_kinds


def big_epub(path: Path, texts: list[str], size: int = 16 * 1024 * 1024) -> Path:
    """An illustrated EPUB of ``size`` bytes: chapters of the fixture texts (about 5 MB of
    text) and plates that do not compress (as photographs do not)."""
    chapters: list[str] = []
    n = 0
    while sum(len(c) for c in chapters) < 5_000_000:
        text = texts[n % len(texts)]
        for part in text.split("\n\n\n"):
            chapters.append(part)
        n += 1
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    plates = '<item id="p" href="plates.jpg" media-type="image/jpeg"/>'
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        z.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        z.writestr(
            "content.opf",
            '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" '
            'version="2.0" unique-identifier="id"><metadata '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">big</dc:identifier>'
            "<dc:title>A Big Illustrated Book</dc:title><dc:language>en</dc:language></metadata>"
            f"<manifest>{items}{plates}</manifest><spine>{spine}</spine></package>",
        )
        for i, text in enumerate(chapters):
            body = "".join(
                f"<p>{p}</p>" for p in text.replace("&", "and").replace("<", "").split("\n\n")
            )
            z.writestr(
                f"c{i}.xhtml",
                '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{i}</title></head><body>{body}</body></html>",
                zipfile.ZIP_DEFLATED,
            )
        z.writestr("plates.jpg", b"", zipfile.ZIP_STORED)
    rest = size - path.stat().st_size
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("plates2.jpg", os.urandom(max(0, rest - 200)), zipfile.ZIP_STORED)
    return path


def verification_latency() -> None:
    """One verification call (core.agent.spoiler_verify) against the fake server on loopback:
    the least a doubtful sentence waits; a real API adds its own round trip (about 0.5-1 s)."""
    import asyncio

    from core.agent.service import make_provider
    from core.agent.spoiler_verify import SupportVerifier
    from core.settings import Settings
    from tests.fakes.anthropic_server import FakeAnthropic, Reply

    books = FIXTURES / "books"
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        book = import_book(lib, books / "metamorphosis.epub").book
        guard = SpoilerGuard(SpoilerIndex.build(lib.db, book.id), read_to=28, question="")
        provider = make_provider(
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
            "sk-ant-bench-0000",
            max_retries=0,
            timeout=5.0,
        )
        verifier = SupportVerifier(provider, guard, "What happens to Gregor?")

        async def go() -> list[float]:
            out = []
            for _ in range(12):
                fake.add(Reply.text("UNSUPPORTED"))
                start = time.perf_counter()
                check = await verifier("Gregor dies quietly that night.")
                out.append((time.perf_counter() - start) * 1000)
                assert not check.supported
            await provider.aclose()
            return out[2:]  # the first calls import and connect

        ms = asyncio.run(go())
        report(
            "verification call, fake server on loopback",
            f"median {median(ms):.0f} ms",
            "-",
            True,
        )
        lib.close()


def evaluation(lib: Library, ids: dict[str, int]) -> None:
    """The evaluation set by kind and by book, with the lexical check alone (no model) and with
    a model that verifies the doubtful sentences and judges them right (``oracle``: the best
    a verification can do; an honest estimate of a real judge, and a real small model, are in
    tests/bench/bench_spoiler_judges.py), and what the verification costs: calls per
    sentence and the size of each call (the wait it adds: tests/bench/bench_spoiler_verify.py)."""
    print(f"  evaluation by kind (books: {', '.join(ids)}):")
    for label, verify in (("no model", None), ("verified", oracle)):
        kinds = evaluate_kinds(lib.db, ids, verify=verify)
        kinds["all"] = total(kinds)
        for kind, r in kinds.items():
            report(
                f"{label}, {kind}: leaks caught",
                f"{r.caught}/{r.leaks} = {r.recall:.0%}",
                ">= 95 %",
                r.recall >= 0.95,
            )
            report(
                f"{label}, {kind}: false alarms",
                f"{r.false_alarms}/{r.honest} = {r.false_alarm_rate:.1%}",
                "<= 2 %",
                r.false_alarm_rate <= 0.02,
            )
        everything = kinds["all"]
        if verify is not None and everything.verify_chars:
            chars = everything.verify_chars
            share = everything.verified / everything.sentences
            tokens = [c / 4 for c in chars]  # about 4 characters a token in English prose
            print(
                f"  verification: {everything.verified}/{everything.sentences} sentences "
                f"({share:.0%}); input per call median {median(tokens):.0f} tokens, p95 "
                f"{percentile(tokens, 95):.0f} (characters / 4), output at most 8 tokens; "
                f"an 8-sentence answer: {8 * share:.1f} calls, about "
                f"{8 * share * median(tokens):.0f} input tokens"
            )
    print("  by book and kind (no model | verified):")
    plain = {name: evaluate_kinds(lib.db, {name: i}) for name, i in ids.items()}
    checked = {name: evaluate_kinds(lib.db, {name: i}, verify=oracle) for name, i in ids.items()}
    for name in ids:
        for kind, r in plain[name].items():
            v = checked[name][kind]
            print(
                f"    {name + '/' + kind:<26} caught {r.caught:>3}/{r.leaks:<3} | {v.caught:>3}"
                f"   false alarms {r.false_alarms:>2}/{r.honest:<3} | {v.false_alarms:>2}"
            )
    prefix_leaks(lib, ids)
    new = evaluate_kinds(lib.db, ids, files=("cases_new.txt",), original=False)["plain"]
    checked_new = evaluate_kinds(
        lib.db, ids, verify=oracle, files=("cases_new.txt",), original=False
    )["plain"]
    print(
        f"  new plain-word cases (written before this session's changes): caught "
        f"{new.caught}/{new.leaks} | {checked_new.caught}, false alarms "
        f"{new.false_alarms}/{new.honest} | {checked_new.false_alarms}"
    )


def prefix_leaks(lib: Library, ids: dict[str, int]) -> None:
    """Issue 41: the words shown of sentences then held back (each piece shown while the
    sentence was written passed the check on the sentence so far; the whole did not), and
    how much of the sentences shown went out before they ended (the gain)."""
    print("  pieces shown while a sentence is written (each case streamed, 200 deltas/s):")
    for label, verify in (("no model", None), ("verified", oracle)):
        kinds = prefix_kinds(lib.db, ids, verify=verify)
        everything = {True: PrefixResult(), False: PrefixResult()}
        for by in kinds.values():
            for leak, r in by.items():
                everything[leak].add(r)
        kinds["all"] = everything
        for kind, by in kinds.items():
            leaks, honest = by.get(True, PrefixResult()), by.get(False, PrefixResult())
            held = leaks.held + honest.held
            leaked = leaks.leaked + honest.leaked
            words = leaks.leaked_words + honest.leaked_words
            held_words = leaks.held_words + honest.held_words
            early = honest.early_words / honest.shown_words if honest.shown_words else 0.0
            print(
                f"    {label}, {kind:<12} held {held:>3}: a piece shown first in {leaked:>2} "
                f"({words:>3} of their {held_words:>4} words = "
                f"{words / held_words if held_words else 0.0:.1%}); honest sentences shown: "
                f"{early:.0%} of their words before they ended"
            )
        for example in everything[True].examples[:8] if verify is None else ():
            print(f"      shown | withheld: {example}")


def first_question_wait(tmp: Path, books: Path) -> None:
    texts = [
        (books / name).read_text(encoding="utf-8")
        for name in ("alice_in_wonderland.txt", "metamorphosis.txt")
    ]
    epub = big_epub(tmp / "big.epub", texts)
    lib = Library.open(resolve_paths(tmp / "big-home"))
    start = time.perf_counter()
    book = import_book(lib, epub).book
    imported = time.perf_counter() - start
    start = time.perf_counter()
    prepare_book(lib.db, book.id)  # what `margin import` and the window now do right after
    prepared = time.perf_counter() - start
    print(
        f"  16 MiB EPUB ({epub.stat().st_size / 2**20:.1f} MiB, {book.page_count} pages): "
        f"import {imported:.1f} s, then the check's counts {prepared * 1000:.0f} ms"
    )
    waits_before, waits_after = [], []
    for _ in range(3):  # interleaved: counts made at the first question (before) or at import
        lib.db.execute_sql("DELETE FROM spoiler_stats")
        start = time.perf_counter()
        SpoilerIndexCache().get(lib.db, book.id)  # a fresh process's first question
        waits_before.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        SpoilerIndexCache().get(lib.db, book.id)
        waits_after.append((time.perf_counter() - start) * 1000)
    report(
        "first question's wait, counts at 1st question",
        f"median {median(waits_before):.0f} ms",
        "(before)",
        True,
    )
    report(
        "first question's wait, counts made at import",
        f"median {median(waits_after):.0f} ms",
        "< 100 ms",
        median(waits_after) < 100,
    )
    lib.close()


def main() -> None:
    before = None
    if "--before" in sys.argv:  # a previous core/agent/spoilers.py (spoiler_before_after)
        from spoiler_before_after import load

        before = load(Path(sys.argv[sys.argv.index("--before") + 1]))
    print(f"bench_spoilers on {machine()}")
    books = FIXTURES / "books"
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = {b.name: import_book(lib, books / b.file).book.id for b in BOOKS}
        parts = [
            (books / name).read_text(encoding="utf-8")
            for name in ("alice_in_wonderland.txt", "metamorphosis.txt")
        ]
        pieces, size, i = [], 0, 0
        while size < 3_000_000:
            piece = parts[i % 2].replace("*** START", "*** BEGIN").replace("*** END", "*** FINISH")
            pieces.append(piece)
            size += len(piece)
            i += 1
        big = Path(tmp) / "three_megabytes.txt"
        big.write_text("\n\n".join(pieces), encoding="utf-8")
        book = import_book(lib, big).book
        print(
            f"  library: 3 books; the big one {size / 1e6:.1f} MB of text, {book.page_count} pages"
        )

        counted, stored = [], []
        for _ in range(5):  # the first time: the whole book is read and its words counted
            lib.db.execute_sql("DELETE FROM spoiler_stats")
            start = time.perf_counter()
            index = SpoilerIndex.build(lib.db, book.id)
            counted.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()  # any later time, in any process: stored counts
            index = SpoilerIndex.build(lib.db, book.id)
            stored.append((time.perf_counter() - start) * 1000)
        report(
            "index build, 3 MB book, first time (counting)",
            f"median {median(counted):.0f} ms",
            "-",
            True,
        )
        report(
            "index build, 3 MB book, from stored counts",
            f"median {median(stored):.0f} ms",
            "< 100 ms",
            median(stored) < 100,
        )
        cache = SpoilerIndexCache()
        cache.get(lib.db, book.id)
        hits = []
        for _ in range(50):
            start = time.perf_counter()
            cache.get(lib.db, book.id)
            hits.append((time.perf_counter() - start) * 1000)
        report(
            "index from the cache (median)", f"{median(hits):.3f} ms", "< 1 ms", median(hits) < 1
        )

        answers = [
            s
            for b in BOOKS
            for kind in ("leaks", "honest", "heldout_leaks", "heldout_honest")
            for s in sentences(f"{b.name}_{kind}")
        ]
        rng = random.Random(16)
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(3):
            read_to = rng.choice([20, 40, book.page_count // 3])
            for semantic in (False, True):  # interleaved: names only, and with support
                index = SpoilerIndex.build(lib.db, book.id)  # a fresh index: look-ups cold
                guard = SpoilerGuard(
                    index, read_to=read_to, question="What happens next?", semantic=semantic
                )
                for sentence in answers:
                    start = time.perf_counter()
                    guard.check(sentence)
                    times[semantic].append((time.perf_counter() - start) * 1000)
        for semantic, label in ((False, "later names only"), (True, "with the semantic layer")):
            p50, p95 = median(times[semantic]), percentile(times[semantic], 95)
            report(f"check per sentence, {label}, median", f"{p50:.2f} ms", "< 2 ms", p50 < 2)
            report(f"check per sentence, {label}, p95", f"{p95:.2f} ms", "< 5 ms", p95 < 5)
        for semantic, label in ((False, "names only"), (True, "with semantic layer")):
            t = times[semantic]
            answers_ms = [sum(t[k : k + 8]) for k in range(0, len(t) - 7, 8)]
            report(
                f"check per 8-sentence answer, {label}",
                f"median {median(answers_ms):.1f} ms",
                "< 20 ms",
                median(answers_ms) < 20,
            )

        text = " ".join(answers[:40])
        # issue 41: the sentence being written checked in pieces (``SpoilerGuard.prefix``) or
        # not ("old": a sentence out once it ended), interleaved; CPU of this thread
        deltas: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(3):
            for prefixes in (False, True):
                index = SpoilerIndex.build(lib.db, book.id)  # a fresh index: look-ups cold
                index.passage_ids(["alice"], 10, later=False)  # (every passage's length, once)
                guard = SpoilerGuard(index, read_to=book.page_count // 3, question="")
                guard.prefixes = prefixes
                start = time.thread_time()
                for k in range(0, len(text), 5):
                    guard.feed(text[k : k + 5])
                    guard.release()
                    guard.prefix(now=k / 1000)  # 200 deltas a second
                guard.flush()
                deltas[prefixes].append((time.thread_time() - start) * 1000 / (len(text) / 5))
        for prefixes, label in ((False, "whole sentences (old)"), (True, "in pieces (new)")):
            per_chunk = median(deltas[prefixes])
            report(
                f"streaming, per 5-character delta, {label}",
                f"{per_chunk:.3f} ms CPU",
                "< 1 ms",
                per_chunk < 1,
            )

        for label, part in (("second set", "_heldout"), ("main set", "")):
            r = evaluate(lib.db, ids, part)
            report(
                f"{label}: leaks caught",
                f"{r.caught}/{r.leaks} = {r.recall:.0%}",
                ">= 90 %",
                r.recall >= 0.9,
            )
            report(
                f"{label}: false alarms",
                f"{r.false_alarms}/{r.honest} = {r.false_alarm_rate:.1%}",
                "<= 2 %",
                r.false_alarm_rate <= 0.02,
            )
        for extra in EXTRA_BOOKS:
            if (SPOILER_BOOKS / extra.file).is_file():
                ids[extra.name] = import_book(lib, SPOILER_BOOKS / extra.file).book.id
        evaluation(lib, ids)
        if before is not None:
            from spoiler_before_after import accuracy, cost

            accuracy(lib, ids, before)
            cost(lib, book.id, book.page_count, before)
        print("  (the issue-16 figures below count only sentences held for a later word)")
        result = combined(evaluate(lib.db, ids), evaluate(lib.db, ids, "_heldout"))
        report(
            "both: leaks caught",
            f"{result.caught}/{result.leaks} = {result.recall:.0%}",
            ">= 90 %",
            result.recall >= 0.9,
        )
        report(
            "both: false alarms",
            f"{result.false_alarms}/{result.honest} = {result.false_alarm_rate:.1%}",
            "<= 2 %",
            result.false_alarm_rate <= 0.02,
        )
        lib.close()
        first_question_wait(Path(tmp), books)
    verification_latency()  # last: a library opened elsewhere rebinds the models


if __name__ == "__main__":
    main()
