"""The plain text of real books against their sources: a corpus of Standard Ebooks (CC0).

Build the corpus first (nothing is downloaded here and nothing lands in the repository):
    python tests/bench/build_se_corpus.py /work/cache/se /path/to/standardebooks+*/repo
Run:
    python tests/bench/bench_corpus.py [CORPUS_DIR=/work/cache/se] [--runs N]
    MARGIN_ROOT=/tmp/old-tree python tests/bench/bench_corpus.py ...   (another version of
    core, e.g. ``git archive REF | tar -x -C /tmp/old-tree``: before/after on one machine)

Per book and in total: import time (median of --runs), pages, database size against the
EPUB, contents entries against the book's own navigation, text blocks of the source not
found in the pages, note references glued to their word or kept apart ("word[5]"), endnotes
numbered ("[5] …") and linked both ways (page links in the stored HTML), verse line pairs
kept as lines, alt texts in place ("[Illustration: …]"), image-only documents kept, pages
under 30 characters that are not a whole short document, and paragraphs cut mid-sentence
(cuts inside a paragraph that do not follow a sentence end; those where the paragraph has
no sentence end near the cut are counted apart as unavoidable).

Everything about the source is read with selectolax straight from the EPUB, not through
Margin's parser.
"""

from __future__ import annotations

import itertools
import os
import re
import statistics
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(os.environ.get("MARGIN_ROOT") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(ROOT))

from selectolax.lexbor import LexborHTMLParser, LexborNode  # noqa: E402

from core.books.importer import import_book  # noqa: E402
from core.paths import resolve_paths  # noqa: E402
from core.store.library import Library  # noqa: E402

WORD = re.compile(r"\w+")
SENTENCE_END = re.compile(r"[.!?…:;][\"'”’)\]]*$")
SENTENCE_IN = re.compile(r"[.!?…][\"'”’)\]]*\s")
VERSE_TYPES = ("z3998:verse", "z3998:poem", "z3998:song", "z3998:hymn", "z3998:lyrics")
NOTEREF = re.compile(r"<a\b[^>]*epub:type=\"noteref\"[^>]*>([^<]*)</a>")
IMG_ALT = re.compile(r'<img\b[^>]*?\balt="([^"]+)"[^>]*>')
BLOCK_SELECTOR = "p, h1, h2, h3, h4, h5, h6, li, td, th, blockquote, figcaption, header"


def clean(text: str) -> str:
    return " ".join(text.split())


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


@dataclass
class Source:
    """What the EPUB holds, read independently of Margin."""

    nav_entries: int = 0
    blocks: list[str] = field(default_factory=list)
    noterefs: list[tuple[str, str]] = field(default_factory=list)  # (text before, label)
    endnotes: list[tuple[str, str]] = field(default_factory=list)  # (number, first words)
    verse_pairs: list[tuple[str, str]] = field(default_factory=list)
    alts: list[str] = field(default_factory=list)
    image_only_docs: list[str] = field(default_factory=list)  # their alt texts


def _types(node: LexborNode) -> str:
    return node.attributes.get("epub:type") or ""


def read_source(path: Path) -> Source:
    src = Source()
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        opf_name = next(n for n in names if n.endswith(".opf"))
        opf = z.read(opf_name).decode()
        base = opf_name.rsplit("/", 1)[0]
        manifest = dict(re.findall(r'<item[^>]*?href="([^"]+)"[^>]*?id="([^"]+)"', opf))
        ids = {v: k for k, v in manifest.items()}
        spine = [
            f"{base}/{ids[idref]}"
            for idref in re.findall(r'<itemref[^>]*idref="([^"]+)"', opf)
            if idref in ids
        ]
        nav = next((f"{base}/{h}" for h, i in manifest.items() if h.endswith("toc.xhtml")), "")
        if nav in names:
            tree = LexborHTMLParser(z.read(nav).decode())
            toc = next(
                (n for n in tree.css("nav") if "toc" in (_types(n) or "").split()),
                None,
            )
            if toc is not None:
                src.nav_entries = len(toc.css("li > a"))
        for doc in spine:
            markup = z.read(doc).decode()
            # each note reference marked where it stands, to find the text before it
            marked = NOTEREF.sub(lambda m: f"⟦{m.group(1)}⟧", markup)
            # an image stands in the text as its alt text (what Margin is asked to keep)
            marked = IMG_ALT.sub(lambda m: f" [Illustration: {m.group(1)}] ", marked)
            tree = LexborHTMLParser(marked)
            body = tree.body
            original = LexborHTMLParser(markup).body
            if body is None or original is None:
                continue
            for node in body.css(BLOCK_SELECTOR):
                if len(node.css(BLOCK_SELECTOR)) > 1:
                    continue  # only the innermost blocks
                text = clean(node.text().replace("⟦", " ").replace("⟧", " ").replace("↩", ""))
                if text:
                    src.blocks.append(text)
                flat = clean(node.text().replace("↩", ""))
                for m in re.finditer(r"⟦([^⟧]*)⟧", flat):
                    before = flat[: m.start()].replace("⟦", "").replace("⟧", "")[-15:]
                    if before.strip():
                        src.noterefs.append((before, m.group(1)))
            for section in body.css("section"):
                if "endnotes" not in _types(section).split():
                    continue
                top = section.css_first("ol")
                items = [c for c in top.iter() if c.tag == "li"] if top is not None else []
                for number, li in enumerate(items, 1):
                    first = clean(li.text().replace("⟦", "").replace("⟧", "").replace("↩", ""))[:20]
                    src.endnotes.append((str(number), first))
            for verse in body.css("*"):
                if not any(t in _types(verse) for t in VERSE_TYPES):
                    continue
                for p in verse.css("p"):
                    lines = [
                        clean(LexborHTMLParser(part).text().replace("⟦", "[").replace("⟧", "]"))
                        for part in re.split(r"<br\s*/?>", p.html or "")
                    ]
                    lines = [line for line in lines if line]
                    src.verse_pairs.extend(itertools.pairwise(lines))
            images = original.css("img")
            for img in images:
                alt = clean(img.attributes.get("alt") or "")
                if alt:
                    src.alts.append(alt)
            if images and not clean(original.text()):
                src.image_only_docs.append(clean(images[0].attributes.get("alt") or ""))
    # a verse element inside another (a poem holding a song) gives its pairs once
    src.verse_pairs = list(dict.fromkeys(src.verse_pairs))
    return src


@dataclass
class Result:
    name: str
    seconds: float
    pages: int
    db_ratio: float
    toc: int
    nav: int
    blocks: int
    lost: int
    noterefs: int
    glued: int
    apart: int
    endnotes: int
    numbered: int
    refs_linked: int
    backs_linked: int
    verse_pairs: int
    verse_kept: int
    alts: int
    alts_kept: int
    image_docs: int
    image_docs_kept: int
    tiny: int
    cuts: int
    mid_sentence: int
    unavoidable: int


def measure(path: Path, runs: int) -> Result:
    src = read_source(path)
    times: list[float] = []
    for run in range(runs):
        with tempfile.TemporaryDirectory() as home:
            lib = Library.open(resolve_paths(home))
            start = time.perf_counter()
            book = import_book(lib, path).book
            times.append(time.perf_counter() - start)
            if run < runs - 1:
                lib.close()
                continue
            pages = lib.pages(book.id, 1, book.page_count)
            toc = lib.toc(book.id)
            lib.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            size = lib.paths.database.stat().st_size
            lib.close()
    text = "\n\n".join(p.text for p in pages)
    html = "\n".join(p.html or "" for p in pages)
    # blocks lost: the first 8 words of every source block, in the pages' words (markers'
    # brackets are not words, so "March[1]" and "March,1" both read "march 1")
    book_words = words(text)
    grams = {tuple(book_words[i : i + 8]) for i in range(len(book_words))}
    joined = " ".join(book_words)
    lost = 0
    for block in src.blocks:
        w = words(block)
        if not w:
            continue
        if len(w) >= 8:
            if tuple(w[:8]) not in grams:
                lost += 1
        elif " ".join(w) not in joined:
            lost += 1
    flat = clean(text)
    glued = apart = 0
    for before, label in src.noterefs:
        if f"{before}[{label}]" in flat:
            apart += 1
        elif f"{before}{label}" in flat:
            glued += 1
    numbered = sum(1 for n, first in src.endnotes if f"[{n}] {first}" in flat)
    refs_linked = len(re.findall(r'<sup><a href="page:[1-9]\d*">', html))
    backs_linked = len(re.findall(r'<a href="page:[1-9]\d*">↩</a>', html))
    # a stage direction inside a line is marked "(…)" in the text, not in the source
    unmarked = text.replace("(", "").replace(")", "")
    verse_kept = sum(
        1
        for a, b in src.verse_pairs
        if f"{a[-20:]}\n{b[:20]}".replace("(", "").replace(")", "") in unmarked
    )
    alts_kept = sum(1 for alt in src.alts if f"[Illustration: {alt}]" in flat)
    image_kept = sum(1 for alt in src.image_only_docs if alt and f"[Illustration: {alt}]" in flat)
    # pages under 30 characters that are not their chapter's only page
    per_chapter: dict[int, int] = {}
    for p in pages:
        per_chapter[p.chapter] = per_chapter.get(p.chapter, 0) + 1
    tiny = sum(1 for p in pages if len(p.text.strip()) < 30 and per_chapter[p.chapter] > 1)
    # cuts inside a paragraph: the page's last paragraph goes on as the next page's first
    source_text = clean(" ¶ ".join(src.blocks))
    cuts = mid = unavoidable = 0
    for a, b in itertools.pairwise(pages):
        if a.chapter != b.chapter or not a.text or not b.text:
            continue
        last = a.text.rsplit("\n\n", 1)[-1]
        first = b.text.split("\n\n", 1)[0]
        seam = clean(f"{last[-30:]} {first[:30]}")
        if len(last) < 30 or len(first) < 30 or seam not in source_text:
            continue
        cuts += 1
        if not SENTENCE_END.search(last.rstrip()):
            mid += 1
            around = last[-1000:] + " " + first[:1000]
            if not SENTENCE_IN.search(around):
                unavoidable += 1
    return Result(
        name=path.stem,
        seconds=statistics.median(times),
        pages=len(pages),
        db_ratio=size / path.stat().st_size,
        toc=len(toc),
        nav=src.nav_entries,
        blocks=len(src.blocks),
        lost=lost,
        noterefs=len(src.noterefs),
        glued=glued,
        apart=apart,
        endnotes=len(src.endnotes),
        numbered=numbered,
        refs_linked=refs_linked,
        backs_linked=backs_linked,
        verse_pairs=len(src.verse_pairs),
        verse_kept=verse_kept,
        alts=len(src.alts),
        alts_kept=alts_kept,
        image_docs=len(src.image_only_docs),
        image_docs_kept=image_kept,
        tiny=tiny,
        cuts=cuts,
        mid_sentence=mid,
        unavoidable=unavoidable,
    )


COLUMNS = (
    ("book", 28),
    ("s", 5),
    ("pages", 5),
    ("db×", 4),
    ("toc/nav", 9),
    ("lost", 7),
    ("refs glued/apart", 16),
    ("notes num/ref→/←", 17),
    ("verse kept", 13),
    ("alt", 7),
    ("img docs", 8),
    ("<30", 3),
    ("mid-sent(unavoid)/cuts", 22),
)


def row(r: Result) -> list[str]:
    return [
        r.name[:28],
        f"{r.seconds:.2f}",
        str(r.pages),
        f"{r.db_ratio:.2f}",
        f"{r.toc}/{r.nav}",
        f"{r.lost}/{r.blocks}",
        f"{r.glued}/{r.apart} of {r.noterefs}",
        f"{r.numbered}/{r.refs_linked}/{r.backs_linked} of {r.endnotes}",
        f"{r.verse_kept}/{r.verse_pairs}",
        f"{r.alts_kept}/{r.alts}",
        f"{r.image_docs_kept}/{r.image_docs}",
        str(r.tiny),
        f"{r.mid_sentence}({r.unavoidable})/{r.cuts}",
    ]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    if "--runs" in sys.argv:
        args = [a for a in args if a != str(runs)]
    corpus = Path(args[0]) if args else Path("/work/cache/se")
    books = sorted(corpus.glob("*.epub"))
    if not books:  # `make bench` runs every benchmark: no corpus here is not a failure
        print(f"bench_corpus skipped: no EPUBs in {corpus} (build them with build_se_corpus.py)")
        return
    print(f"bench_corpus: {len(books)} books in {corpus}, core from {ROOT}, {runs} run(s) each")
    print("  ".join(f"{name:>{width}}" for name, width in COLUMNS))
    results = []
    for path in books:
        r = measure(path, runs)
        results.append(r)
        print("  ".join(f"{v:>{w}}" for v, (_, w) in zip(row(r), COLUMNS, strict=True)), flush=True)
    fields = list(Result.__dataclass_fields__)
    total = Result(
        name="TOTAL",
        seconds=max(r.seconds for r in results),
        pages=sum(r.pages for r in results),
        db_ratio=max(r.db_ratio for r in results),
        **{f: sum(getattr(r, f) for r in results) for f in fields[4:]},
    )
    print("  ".join(f"{v:>{w}}" for v, (_, w) in zip(row(total), COLUMNS, strict=True)))
    print("(TOTAL: s and db× are the largest of any book)")


if __name__ == "__main__":
    main()
