"""Our parsers side by side with the anchor's parsers, interleaved in one run (issue 17, item 14).

The anchor is the public project interactive-books (github: daehyunpy/interactive-books). Its
Python parsers (EPUB, PDF, plain text, Markdown, HTML) turn a file into a list of pages of
plain text. This bench times its ``BookParser().parse`` against our ``parse_book``
(core/books/parse.py) on the same files, alternating ours / the anchor's in every round,
and prints medians and the ratio ours ÷ anchor (below 1.0 means we are faster). It does it
twice: with the machine's other core idle, and with another program keeping one core busy.

Setting up (none of the anchor's code, nor its libraries, ever goes into this repository):

1. Put a copy of the interactive-books source somewhere outside this repository (a clone
   or an export of its git tree). Its parsers are in
   ``python/source/interactive_books/infra/parsers/``.
2. Install the libraries those parsers need into a separate folder, not into Margin's
   .venv: use this .venv's pip with ``--target`` and a folder such as /tmp/anchor-deps. They
   are pymupdf (AGPL: it must never become a Margin dependency), selectolax older than 1.0
   (the anchor uses its Modest backend, which selectolax 1.0 removed; its lock file has
   0.4.6) and markdown-it-py (its lock file has 4.0.0). pymupdf's lock-file version is
   1.27.1; newer ones pull in large extra packages.
3. Run, from the project root::

       MARGIN_ANCHOR_SRC=/path/to/interactive-books/python/source \\
       MARGIN_ANCHOR_DEPS=/tmp/anchor-deps \\
           .venv/bin/python tests/bench/bench_anchor.py [--rounds N] [--quick] \\
           [--only TEXT] [--with-import] [--same-job] [--cold | --both]

   ``--rounds N``: rounds per book (5); ``--quick``: only the smaller books; ``--only
   TEXT``: only the books whose label holds TEXT (e.g. ``--only Markdown``);
   ``--with-import``: also our whole import (parse, chunks, store, index), for reference;
   ``--same-job``: for the EPUBs, a third side doing the anchor's job with our parts
   (``same_job``: our zip reading and lexbor, one plain-text page a spine document), which
   tells the reading apart from what our parse makes beyond it;
   ``--cold``: every round parses in a fresh process on each side (a reader's first book:
   nothing warm but the imported modules, e.g. no EPUB worker process kept from an earlier
   book, no memory the allocator already holds); ``--both``: warm, then cold.

Warm (the default): each side keeps one process for the whole run, parses each book once
unmeasured, then ``--rounds`` times. Cold: for each round and side a new process imports
its parsers, says it is ready, and only then is given the book; it parses once and ends
before the other side starts (the order alternating round by round). In both modes the
clock runs inside the parsing process, around the parse alone.

The anchor runs in a process of its own (its selectolax is not ours, and its modules stay
apart from ours); both sides time the parse inside their own process, so the pipe between
them is not counted. Without MARGIN_ANCHOR_SRC this prints these words and exits 0.

What each side does (the headline ratio is parser against parser, and ours does more):

* ours: checks the file (size and limits), decodes it, finds the book's structure
  (chapters, headings, contents with their pages), builds a safe HTML fragment for display
  next to every block of text, and cuts pages of about 2,000 characters. PDF text is read
  by pypdfium2 in memory-capped worker processes (one or two), with page labels, the
  outline and paragraph clean-up. Chunking and storing happen later, in the import.
* anchor: EPUB: one "page" of plain text per spine document (selectolax Modest); TXT:
  3,000-character slices; Markdown: sections cut at level-1/2 headings (markdown-it);
  HTML: the whole text as one page; PDF: ``page.get_text()`` of pymupdf for every page, in
  the same process. No HTML for display, no contents, no limits.
"""

from __future__ import annotations

import compileall
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WHAT_EACH_DOES = """\
what is timed (ours does more; chunking, storing and indexing come later, in the import):
  ours    parse_book: checks the file and its limits, decodes it, finds chapters, headings and
          the contents with their pages, keeps a safe HTML fragment for display beside every
          block of text, cuts pages of ~2,000 characters; PDF: pypdfium2 text in memory-capped
          worker processes (1 or 2, pulling pieces), page labels, outline, paragraph clean-up
  anchor  BookParser().parse: a list of plain-text pages. EPUB: one page a spine document
          (only text directly in the body's children); TXT: 3,000-character slices; Markdown:
          sections at level-1/2 headings; HTML: one page; PDF: pymupdf get_text, one process
  same    (--same-job, EPUBs) the anchor's EPUB job with our parts: our zip reading and
          lexbor, one plain-text page a spine document, as the anchor makes it"""
ANCHOR_FORMATS = {"epub": "epub", "pdf": "pdf", "txt": "txt", "md": "markdown", "html": "html"}
ROUNDS = 5


# --- the anchor's side: a process of its own -------------------------------------------------


def anchor_worker() -> None:
    """Read one JSON request a line ({"path": ...}), parse with the anchor's parser for that
    suffix, answer with the seconds it took, the page count and the characters of text."""
    src = os.environ["MARGIN_ANCHOR_SRC"]
    deps = os.environ.get("MARGIN_ANCHOR_DEPS", "")
    sys.path[:0] = [p for p in (src, deps) if p]
    import importlib

    modules = {
        suffix: importlib.import_module(f"interactive_books.infra.parsers.{name}")
        for suffix, name in ANCHOR_FORMATS.items()
    }

    def parse(path: Path) -> tuple[int, int]:
        pages = modules[path.suffix.lstrip(".")].BookParser().parse(path)
        return len(pages), sum(len(p.text) for p in pages)

    serve(parse)


def serve(parse: Callable[[Path], tuple[int, int]]) -> None:
    """Say "ready" (modules imported), then answer each JSON request line ({"path": ...})
    with the seconds and CPU seconds ``parse`` took, and the pages and characters it made."""
    out = os.fdopen(os.dup(1), "w")  # answers only: anything the parsers print goes to stderr
    os.dup2(2, 1)
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        path = Path(json.loads(line)["path"])
        start, cpu = time.perf_counter(), time.process_time()
        pages, chars = parse(path)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        answer = {"s": elapsed, "cpu": cpu, "pages": pages, "chars": chars}
        out.write(json.dumps(answer) + "\n")
        out.flush()


def ours_worker() -> None:
    """Our side in a process of its own (``--cold``): every parser imported first, as the
    application has them when a book is opened."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import core.books.epub
    import core.books.pdf
    import core.books.text
    from core.books.parse import parse_book

    def parse(path: Path) -> tuple[int, int]:
        book = parse_book(path)
        return len(book.pages), sum(len(p.text) for p in book.pages)

    try:
        serve(parse)
    finally:
        core.books.pdf.shutdown_workers()


SAME_LABEL = "  the anchor's job, with our parts"


def same_job(path: Path) -> tuple[int, int]:
    """The anchor's EPUB job done with our parts (``--same-job``): our zip reading (its
    checks, zlib-ng), package and spine, and lexbor; one page of plain text a spine
    document, the text of the body's elements joined by line ends, as the anchor's
    ``extract_block_text`` makes it. No blocks, no HTML for display, no contents, no pages of
    2,000 characters: what our parse does beyond this is what the two sides' ratio weighs."""
    from selectolax.lexbor import LexborHTMLParser

    from core.books.epub import _find_opf, _xml
    from core.books.epubdocs import strip_subset
    from core.books.epubpackage import read_package
    from core.books.epubzip import EpubArchive

    arc = EpubArchive(path)
    try:
        opf_path = _find_opf(arc)
        pkg = read_package(_xml(arc.read(opf_path), path, "package file"), opf_path, arc)
        texts = []
        for doc in pkg.spine:
            body = LexborHTMLParser(strip_subset(arc.read(doc.path))).body
            parts = (node.text(deep=False) for node in body.iter()) if body is not None else ()
            texts.append("\n".join(part for part in parts if part).strip())
    finally:
        arc.close()
    return len(texts), sum(map(len, texts))


def same_worker() -> None:
    """``same_job`` in a process of its own (``--cold``), its modules imported first."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import selectolax.lexbor  # noqa: F401

    import core.books.epub  # noqa: F401

    serve(same_job)


if __name__ == "__main__" and sys.argv[1:2] == ["--anchor-worker"]:
    anchor_worker()  # before our own modules load: the anchor's selectolax is not ours
    raise SystemExit(0)
if __name__ == "__main__" and sys.argv[1:2] == ["--ours-worker"]:
    ours_worker()
    raise SystemExit(0)
if __name__ == "__main__" and sys.argv[1:2] == ["--same-worker"]:
    same_worker()
    raise SystemExit(0)

from common import FIXTURES, ROOT, machine, median  # noqa: E402


class Anchor:
    """A parsing process (the anchor's, or ours with ``side="--ours-worker"``), ready."""

    def __init__(self, side: str = "--anchor-worker") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), side],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/" if side == "--anchor-worker" else None,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline() != "ready\n":
            raise SystemExit("A parser process did not start (its error is printed above).")

    def parse(self, path: Path) -> tuple[float, int, int, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"path": str(path)}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("The anchor's parser process ended (its error is printed above).")
        answer = json.loads(line)
        return answer["s"], answer["pages"], answer["chars"], answer["cpu"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# --- our side ----------------------------------------------------------------------------------


def ours(path: Path) -> tuple[float, int, int, float]:
    """(wall s, pages, characters, CPU s) of ``parse_book``."""
    from core.books.parse import parse_book

    start, cpu = time.perf_counter(), time.process_time()
    book = parse_book(path)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, len(book.pages), sum(len(p.text) for p in book.pages), cpu


def same(path: Path) -> tuple[float, int, int, float]:
    """(wall s, pages, characters, CPU s) of ``same_job``."""
    start, cpu = time.perf_counter(), time.process_time()
    pages, chars = same_job(path)
    return time.perf_counter() - start, pages, chars, time.process_time() - cpu


def cold(side: str) -> Callable[[Path], tuple[float, int, int, float]]:
    """Parse in a fresh process of ``side`` (``--cold``), ended before this returns."""

    def parse(path: Path) -> tuple[float, int, int, float]:
        fresh = Anchor(side)
        try:
            return fresh.parse(path)
        finally:
            fresh.close()

    return parse


def our_import(path: Path) -> float:
    from bench_import import timed_import

    return timed_import(path)[0]


# --- the books ---------------------------------------------------------------------------------

_CHAPTER = re.compile(r"^CHAPTER [IVXLC]+\.\s*$", re.M)


def _alice_chapters() -> list[tuple[str, list[str]]]:
    """Alice's chapters from the real text: (heading, paragraphs)."""
    raw = (FIXTURES / "books" / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    raw = raw.replace("\r\n", "\n")
    start = raw.find("*** START OF")
    end = raw.find("*** END OF")
    body = raw[raw.find("\n", start) + 1 : end if end > 0 else None]
    parts = _CHAPTER.split(body)
    heads = _CHAPTER.findall(body)
    chapters = []
    for head, part in zip(heads, parts[1:], strict=True):
        paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", part) if p.strip()]
        chapters.append((head.strip(), paras))
    return chapters


def make_markdown(path: Path, copies: int) -> Path:
    """Alice as Markdown (a ``##`` heading a chapter, one paragraph a line), ``copies`` times."""
    chapters = _alice_chapters()
    lines = ["# Alice's Adventures in Wonderland", ""]
    for n in range(copies):
        for head, paras in chapters:
            lines += [f"## {head} ({n + 1})", ""]
            for para in paras:
                lines += [para, ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def make_html(path: Path, copies: int) -> Path:
    """Alice as one HTML file (``<h2>`` a chapter, ``<p>`` a paragraph), ``copies`` times.
    Flat on purpose: the anchor reads only text directly inside the body's children (the
    real XHTML of alice_in_wonderland.epub, nested in divs, gives it no text at all)."""
    chapters = _alice_chapters()
    parts = ["<h1>Alice&#8217;s Adventures in Wonderland</h1>"]
    for n in range(copies):
        for head, paras in chapters:
            parts.append(f"<h2>{html.escape(head)} ({n + 1})</h2>")
            parts += [f"<p>{html.escape(para)}</p>" for para in paras]
    path.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>Alice's Adventures in Wonderland</title></head><body>\n"
        + "\n".join(parts)
        + "\n</body></html>",
        encoding="utf-8",
    )
    return path


def make_text(path: Path, copies: int) -> Path:
    """alice_in_wonderland.txt with its text between the Project Gutenberg header and
    footer repeated ``copies`` times (ours drops the header and footer, as for any book)."""
    raw = (FIXTURES / "books" / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    start = raw.index("\n", raw.index("*** START OF")) + 1
    end = raw.index("*** END OF")
    path.write_text(raw[:start] + raw[start:end] * copies + raw[end:], encoding="utf-8")
    return path


def make_epub16(path: Path) -> Path:
    """About 16 MiB of chapter XHTML (140 chapters of Alice's prose), as in bench_import."""
    from tests.core.books.epubgen import make_epub

    text = " ".join((FIXTURES / "books" / "alice_in_wonderland.txt").read_text("utf-8").split())
    body = "".join(f"<p>{text[i : i + 900]}</p>\n  " for i in range(0, 120_000, 900))
    return make_epub(path, [(f"Chapter {n + 1}", body) for n in range(140)], title="Sixteen")


def books(work: Path, quick: bool, only: str) -> dict[str, Path]:
    from bench_import import real_book_pdf

    alice = FIXTURES / "books" / "alice_in_wonderland"
    makers: dict[str, Callable[[], Path]] = {
        "EPUB, generated, 16 MiB of XHTML": lambda: make_epub16(work / "big16.epub"),
        "EPUB, alice_in_wonderland.epub": lambda: alice.with_suffix(".epub"),
        "TXT, alice_in_wonderland.txt": lambda: alice.with_suffix(".txt"),
        "TXT, Alice ×20 (3.2 MiB)": lambda: make_text(work / "alice20.txt", 20),
        "Markdown, Alice": lambda: make_markdown(work / "alice.md", 1),
        "Markdown, Alice ×10": lambda: make_markdown(work / "alice10.md", 10),
        "HTML, Alice": lambda: make_html(work / "alice.html", 1),
        "HTML, Alice ×10": lambda: make_html(work / "alice10.html", 10),
        "PDF, real-book pages, 420 pages": lambda: real_book_pdf(work / "real420.pdf", 60),
        "PDF, real-book pages, 2,002 pages": lambda: real_book_pdf(work / "real2002.pdf", 286),
    }
    return {
        label: make()
        for label, make in makers.items()
        if only.lower() in label.lower() and not (quick and ("×" in label or "2,002" in label))
    }


# --- the run -----------------------------------------------------------------------------------


def _busy_core() -> subprocess.Popen[bytes]:
    """Another program keeping one core busy (ended by the caller)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


Row = dict[str, float]


def run_pass(
    anchor: Anchor | None,
    inputs: dict[str, Path],
    rounds: int,
    with_import: bool,
    same_too: bool = False,
) -> dict[str, Row]:
    """Every book ``rounds`` times on each side; ``anchor`` None: cold (fresh processes).
    ``same_too``: also ``same_job`` for the EPUBs, a third side."""
    every: dict[str, Callable[[Path], tuple[float, int, int, float]]] = {
        "ours": ours if anchor is not None else cold("--ours-worker"),
        "anchor": anchor.parse if anchor is not None else cold("--anchor-worker"),
        "same": same if anchor is not None else cold("--same-worker"),
    }
    rows: dict[str, Row] = {}
    for label, path in inputs.items():
        sides = dict(every)
        if not (same_too and path.suffix == ".epub"):
            del sides["same"]
        times: dict[str, list[float]] = {side: [] for side in (*sides, "import")}
        cpus: dict[str, list[float]] = {side: [] for side in sides}
        sizes: dict[str, tuple[int, int]] = {}
        if anchor is not None:  # warm: imports, caches, our PDF and EPUB worker processes
            for side, parse in sides.items():
                _, pages, chars, _ = parse(path)
                sizes[side] = (pages, chars)
        for n in range(rounds):
            order = list(sides) if n % 2 == 0 else list(reversed(sides))
            for side in order:
                wall, pages, chars, cpu = sides[side](path)
                sizes[side] = (pages, chars)
                times[side].append(wall)
                cpus[side].append(cpu)
            if with_import:
                times["import"].append(our_import(path))
        row = {side: median(times[side]) for side in sides}
        row["ratio"] = row["ours"] / row["anchor"]
        # CPU beside wall: the steadier figure on a machine other programs share
        row["cpu_ratio"] = median(cpus["ours"]) / max(median(cpus["anchor"]), 1e-9)
        row["anchor_chars"] = sizes["anchor"][1]
        if "same" in sides:
            row["same_ratio"] = row["same"] / row["anchor"]
        if with_import:
            row["import"] = median(times["import"])
        rows[label] = row
        extra = f"  (our full import {row['import'] * 1000:.0f} ms)" if with_import else ""
        if "same" in sides:
            extra += (
                f"  (the anchor's job with our parts {row['same'] * 1000:.0f} ms,"
                f" ×{row['same_ratio']:.2f}, CPU ×{median(cpus['same']) / max(median(cpus['anchor']), 1e-9):.2f},"
                f" pages {sizes['same'][0]}, chars {sizes['same'][1]:,})"
            )
        print(
            f"  {label:<36} ours {row['ours'] * 1000:7.0f} ms  anchor {row['anchor'] * 1000:7.0f} ms"
            f"  ×{row['ratio']:.2f} (CPU ×{row['cpu_ratio']:.2f})"
            f"   pages {sizes['ours'][0]}/{sizes['anchor'][0]},"
            f" chars {sizes['ours'][1]:,}/{sizes['anchor'][1]:,}{extra}",
            flush=True,
        )
    return rows


def main() -> None:
    if not os.environ.get("MARGIN_ANCHOR_SRC"):
        print(__doc__)
        print("MARGIN_ANCHOR_SRC is not set: nothing measured.")
        return
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else ROUNDS
    quick = "--quick" in args
    with_import = "--with-import" in args
    same_too = "--same-job" in args
    only = args[args.index("--only") + 1] if "--only" in args else ""
    print(
        f"bench_anchor on {machine()}\n"
        f"ours = core.books.parse.parse_book, anchor = interactive-books BookParser().parse;"
        f" medians of {rounds} rounds, ours and the anchor alternating; ratio = ours ÷ anchor"
        f" (pages and chars: ours/anchor)"
    )
    print(WHAT_EACH_DOES)
    from core.books.pdf import shutdown_workers

    modes = ["warm", "cold"] if "--both" in args else ["cold"] if "--cold" in args else ["warm"]
    if "cold" in modes:  # byte code compiled, as an installed application has it
        for tree in (ROOT / "core", Path(os.environ["MARGIN_ANCHOR_SRC"])):
            compileall.compile_dir(str(tree), quiet=1)
    anchor = Anchor()
    results: dict[str, dict[str, Row]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            inputs = books(Path(tmp), quick, only)
            for mode in modes:
                for busy in (False, True):
                    state = f"{mode}, other core {'busy' if busy else 'idle'}"
                    print(f"{state}:")
                    hog = _busy_core() if busy else None
                    try:
                        side = anchor if mode == "warm" else None
                        results[state] = run_pass(side, inputs, rounds, with_import, same_too)
                    finally:
                        if hog is not None:
                            hog.kill()
                            hog.wait()
    finally:
        anchor.close()
        shutdown_workers()
    print("\nsummary (ms; ratio = ours ÷ anchor, ≤ 1.00 is the goal):")
    print(
        f"  {'':<36} {'idle: ours':>10} {'anchor':>7} {'ratio':>6}   {'busy: ours':>10} {'anchor':>7} {'ratio':>6}"
    )
    for mode in modes:
        print(f"  {mode}:")
        idle, busy = results[f"{mode}, other core idle"], results[f"{mode}, other core busy"]
        for label in idle:
            a, b = idle[label], busy[label]
            print(
                f"  {label:<36} {a['ours'] * 1000:10.0f} {a['anchor'] * 1000:7.0f} {a['ratio']:6.2f}"
                f"   {b['ours'] * 1000:10.0f} {b['anchor'] * 1000:7.0f} {b['ratio']:6.2f}"
                f"   CPU ratio {a['cpu_ratio']:.2f} / {b['cpu_ratio']:.2f}"
                + ("   (the anchor read no text from it)" if not a["anchor_chars"] else "")
            )
            if "same_ratio" in a:
                print(
                    f"  {SAME_LABEL:<36} {a['same'] * 1000:10.0f}"
                    f" {a['anchor'] * 1000:7.0f} {a['same_ratio']:6.2f}   {b['same'] * 1000:10.0f}"
                    f" {b['anchor'] * 1000:7.0f} {b['same_ratio']:6.2f}"
                )
    worst = max(r["ratio"] for rows in results.values() for r in rows.values())
    print(f"  worst ratio {worst:.2f}: {'every format ≤ 1.0×' if worst <= 1.0 else 'MISSED'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
