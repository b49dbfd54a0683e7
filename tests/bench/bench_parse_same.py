"""The parsers at an older commit against the working tree: same output, and how fast.

Each side runs in a process of its own (the old code exported with ``git archive``), parses
the same books in turn (old, new, old, new …: interleaved, the order swapped every round)
and answers with the CPU seconds ``parse_book`` took and digests of what it gave: the pages
(number, label, text, display HTML as the reader shows it, chapter), the contents, the metadata and ``extra`` (its XML problems as the import finishes them), and
the chapters' blocks. A speed-up must leave every digest equal (issue 41: the text shown
and searched stays identical); a difference names the part that changed.

Books: the fixture books, the Standard Ebooks EPUBs in ``--se DIR`` (tests/bench/
build_se_corpus.py), the W3C suite's EPUBs in ``--w3c DIR`` (bench_epubtests.py --out),
the 16 MiB EPUB and a 3 MB text book (as bench_anchor and bench_import_process make them).
Run: .venv/bin/python tests/bench/bench_parse_same.py [--base REF] [--rounds N]
     [--se DIR] [--w3c DIR] [--only TEXT]
Smoke: MARGIN_BENCH_SMOKE=1 (two fixture books, one round).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PARTS = ("pages_text", "pages_html", "toc", "meta", "blocks")


def shown(page_html: str | None, text: str) -> str | None:
    """A page's HTML as the reader shows it: "" is the text's plain paragraphs (as the store
    keeps such a page; the parse leaves it "" since issue 41, parse9), so that digest
    compares what is shown, not the form the parse hands over."""
    if page_html != "":
        return page_html
    from core.store.packing import plain_html

    return plain_html(text)


def finished(extra: dict[str, str], path: Path | None) -> dict[str, str]:
    """``extra`` as the import finishes it: the XML problems of the documents the parse
    left unchecked added (core.books.epubcheck, since issue 41's parse10; a tree without it
    has the problems already)."""
    if path is None or "unchecked" not in extra:
        return extra
    from core.books.epubcheck import late_problems

    done = {k: v for k, v in extra.items() if k != "unchecked"}
    problems = late_problems(path, extra)
    done.pop("problems", None)
    if problems:
        done["problems"] = problems
    return done


def digests(book: object, path: Path | None = None) -> dict[str, str]:
    """A digest of each part of a ``ParsedBook`` (see ``PARTS``; page HTML as ``shown``;
    ``extra`` as ``finished`` for the book at ``path``)."""

    def h(value: object) -> str:
        return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]

    pages = book.pages  # type: ignore[attr-defined]
    return {
        "pages_text": h([(p.number, p.label, p.text, p.chapter) for p in pages]),
        "pages_html": h([shown(p.html, p.text) for p in pages]),
        "toc": h([(t.title, t.level, t.page, getattr(t, "chapter", None)) for t in book.toc]),  # type: ignore[attr-defined]
        "meta": h(
            (
                str(book.format),  # type: ignore[attr-defined]
                book.title,  # type: ignore[attr-defined]
                book.author,  # type: ignore[attr-defined]
                book.language,  # type: ignore[attr-defined]
                sorted(finished(book.extra, path).items()),  # type: ignore[attr-defined]
            )
        ),
        "blocks": h(
            [
                (c.title, [(b.kind, b.text, b.html, b.style) for b in c.blocks])
                for c in book.chapters
            ]  # type: ignore[attr-defined]
        ),
    }


def worker() -> None:
    """One JSON request a line ({"path": ...}): parse, answer CPU seconds and digests."""
    from core.books.parse import parse_book

    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        path = Path(json.loads(line)["path"])
        start = time.process_time()
        try:
            book = parse_book(path)
            elapsed = time.process_time() - start
            got = digests(book, path)
        except Exception as exc:  # a clear error is an output too: it must stay the same
            elapsed = time.process_time() - start
            got = {part: f"{type(exc).__name__}: {exc}" for part in PARTS}
        book = None  # freed before the next book
        out.write(json.dumps({"s": elapsed, "d": got}) + "\n")
        out.flush()


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    sys.path.insert(0, os.getcwd())
    worker()
    raise SystemExit(0)

if __name__ != "__mp_main__":  # (a process the parser spawns, core/books/epubworker.py,
    # imports this script again under that name: it keeps the tree its side was given, which
    # common would put behind this one's)
    from common import FIXTURES, ROOT, SMOKE, base_tree, machine, median, rounds


class Side:
    def __init__(self, tree: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=tree,
            env=env,
        )

    def parse(self, path: Path) -> tuple[float, dict[str, str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"path": str(path)}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return answer["s"], answer["d"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _arg(name: str, default: str = "") -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def books(work: Path) -> list[Path]:
    fixtures = FIXTURES / "books"
    if SMOKE:
        return [fixtures / "metamorphosis.epub", fixtures / "alice_in_wonderland.txt"]
    from bench_anchor import make_text
    from bench_import_process import text_book
    from common import sixteen_mib_epub

    found = sorted(p for p in fixtures.iterdir() if p.suffix in (".epub", ".txt"))
    for option in ("--se", "--w3c"):
        if _arg(option):
            found += sorted(Path(_arg(option)).glob("*.epub"))
    found += [sixteen_mib_epub(work), text_book(work), make_text(work / "alice20.txt", 20)]
    only = _arg("--only")
    return [p for p in found if only in p.name]


def main() -> None:
    base = _arg("--base", "HEAD")
    runs = int(_arg("--rounds", "0")) or rounds(3)
    print(f"bench_parse_same on {machine()}; parse_book at {base} vs the working tree")
    print("  (CPU ms, medians of interleaved rounds; 'same' = every digest equal)")
    different = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sides = {"before": Side(base_tree(base, work)), "now": Side(ROOT)}
        try:
            totals = dict.fromkeys(sides, 0.0)
            for book in books(work):
                got: dict[str, list[float]] = {name: [] for name in sides}
                seen: dict[str, dict[str, str]] = {}
                for name, side in sides.items():  # warm-up: imports, the page cache
                    seen[name] = side.parse(book)[1]
                for n in range(runs):
                    for name in list(sides) if n % 2 == 0 else list(reversed(sides)):
                        seconds, digest = sides[name].parse(book)
                        got[name].append(seconds)
                        if digest != seen[name]:
                            seen[name] = {"unsteady": "the same code gave two outputs"}
                before, now = (median(got[name]) for name in sides)
                for name in sides:
                    totals[name] += median(got[name])
                changed = [p for p in PARTS if seen["before"].get(p) != seen["now"].get(p)]
                different += bool(changed)
                verdict = "same" if not changed else "DIFFERENT: " + ", ".join(changed)
                ratio = now / before if before else 1.0
                print(
                    f"  {book.name[:44]:<44} {before * 1000:8.1f} → {now * 1000:8.1f}"
                    f"  ×{ratio:.2f}  {verdict}",
                    flush=True,
                )
            print(
                f"  all books: {totals['before'] * 1000:.0f} → {totals['now'] * 1000:.0f} ms CPU;"
                f" {'every output the same' if not different else f'{different} DIFFERENT'}"
            )
        finally:
            for side in sides.values():
                side.close()
    if different:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
