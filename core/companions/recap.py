"""The story so far: a summary of each chapter the reader has finished, made once from that
chapter's own text and kept; the chapter being read says how far the reader is in it.

Without a model a summary is extractive: the chapter's most central sentences (the ones
whose words the chapter's paragraphs share most), in the book's order, each with its page.
With a model (``core.companions.model``) one call per chapter writes a short summary from
that chapter's text alone; it is kept and never asked again. Both are kept by the hash of
the chapter's text, so a book read again with the same text keeps them.

Only chapters whose last page is within the bound are summarised: nothing here reads a page
after ``read_to``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass

import peewee as pw

from core.companions.names import split_sentences
from core.companions.store import CompanionStore, book_print
from core.companions.xray import bound_of

RECAP_VERSION = 1
KIND = "recap"
KIND_VIEW = "recap_view"
LONGEST = 40  # a "chapter" longer than this many pages is summarised in parts …
SECTION = 20  # … of this many pages
MIN_WORDS = 40  # a "chapter" shorter than this is a heading, a title page, an epigraph
_WORD = re.compile(r"[^\W\d_]+(?:[’'][^\W\d_]+)?")
_STOP = frozenset(
    "a an and are as at be been but by did do does for from had has have he her hers him his "
    "how i if in into is it its me my no not of on or our she so than that the their them then "
    "there these they this those to up us was we were what when where which while who whom why "
    "will with would you your all any could should very much more most some such only own same "
    "can just said one upon out over again ever never now here said mr mrs miss".split()
)


@dataclass(frozen=True)
class Chapter:
    index: int  # 1-based among the book's chapters with text
    title: str
    first: int  # first and last stored page
    last: int


@dataclass(frozen=True)
class ChapterRecap:
    chapter: Chapter
    state: str  # "read" (summarised) or "current" (the reader is inside it)
    sentences: tuple[tuple[int, str], ...] = ()  # (page, sentence), the extractive summary
    text: str = ""  # a model's summary, when one was made
    read_to: int = 0  # for the current chapter: the last page read in it

    def to_json(self) -> dict[str, object]:
        return {
            "chapter": self.chapter.index,
            "title": self.chapter.title,
            "pages": [self.chapter.first, self.chapter.last],
            "state": self.state,
            "sentences": [list(s) for s in self.sentences],
            "summary": self.text,
            "read_to": self.read_to,
        }


@dataclass(frozen=True)
class Recap:
    book_id: int
    read_to: int
    chapters: tuple[ChapterRecap, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "book_id": self.book_id,
            "read_to": self.read_to,
            "chapters": [c.to_json() for c in self.chapters],
        }


def chapters(
    db: pw.SqliteDatabase, book_id: int, texts: dict[int, str] | None = None
) -> list[Chapter]:
    """The book's chapters with text (front matter left out), in order."""
    from core.search.frontmatter import is_front_matter
    from core.store.library import page_texts

    rows = db.execute_sql(
        "SELECT number, chapter FROM page WHERE book_id = ? ORDER BY number", (book_id,)
    ).fetchall()
    toc = db.execute_sql(
        "SELECT page, title FROM toc_entry WHERE book_id = ? ORDER BY ordinal", (book_id,)
    ).fetchall()
    titles: dict[int, str] = {}
    for page, title in toc:
        titles.setdefault(int(page), str(title))
    if texts is None:
        texts = dict(page_texts(db, book_id))
    groups: list[list[int]] = []
    last_chapter: object = object()
    for number, chapter in rows:
        if chapter != last_chapter:
            groups.append([])
            last_chapter = chapter
        groups[-1].append(int(number))
    found: list[Chapter] = []
    for pages in groups:
        text = "\n\n".join(texts.get(p, "") for p in pages)
        if len(text.split()) < MIN_WORDS or all(is_front_matter(texts.get(p, "")) for p in pages):
            continue
        title = titles.get(pages[0]) or _first_line(texts.get(pages[0], ""))
        title = title or f"Chapter {len(found) + 1}"
        if len(pages) <= LONGEST:
            found.append(Chapter(len(found) + 1, title, pages[0], pages[-1]))
            continue
        # a book without chapters (many PDFs, plain text): parts of SECTION pages, so the
        # story so far grows as the reader reads rather than at the very end
        for at in range(0, len(pages), SECTION):
            part = pages[at : at + SECTION]
            name = f"{title}, pp. {part[0]}–{part[-1]}"
            found.append(Chapter(len(found) + 1, name, part[0], part[-1]))
    return found


def chapter_text(texts: dict[int, str], chapter: Chapter) -> list[tuple[int, str]]:
    return [(n, texts.get(n, "")) for n in range(chapter.first, chapter.last + 1)]


def text_key(pages: list[tuple[int, str]]) -> str:
    digest = hashlib.sha256()
    for _n, text in pages:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def extractive(pages: list[tuple[int, str]], count: int | None = None) -> list[tuple[int, str]]:
    """The chapter's most central sentences, in order, with their pages: a sentence scores
    by how many of the chapter's paragraphs share its content words (each word once,
    weighted by how rare it is within the chapter), divided by its length's square root."""
    paragraphs: list[tuple[int, str]] = [
        (n, p) for n, text in pages for p in text.split("\n\n") if len(p.split()) > 3
    ]
    if not paragraphs:
        return []
    df: Counter[str] = Counter()
    bags = []
    for _n, p in paragraphs:
        words = {w for w in (x.lower() for x in _WORD.findall(p)) if w not in _STOP and len(w) > 2}
        bags.append(words)
        df.update(words)
    total = len(paragraphs)
    want = count or max(2, min(6, round(len(pages) / 2)))
    scored: list[tuple[float, int, int, str]] = []
    order = 0
    for (page, p), _bag in zip(paragraphs, bags, strict=True):
        for sentence in split_sentences(" ".join(p.split())):
            order += 1
            if not 40 <= len(sentence) <= 320:
                continue
            words = {w for w in (x.lower() for x in _WORD.findall(sentence)) if w not in _STOP}
            words = {w for w in words if len(w) > 2}
            if len(words) < 4:
                continue
            score = sum(math.log(1 + df[w]) * math.log(1 + total / df[w]) for w in words if df[w])
            score /= math.sqrt(len(sentence.split()))
            if "“" in sentence or "”" in sentence or '"' in sentence:
                score *= 0.6  # what is said is less of the story than what happens
            scored.append((score, order, page, sentence))
    best = sorted(scored, key=lambda s: -s[0])[:want]
    return [(page, sentence) for _score, _order, page, sentence in sorted(best, key=lambda s: s[1])]


def recap(
    db: pw.SqliteDatabase, book_id: int, read_to: int | None = None, *, only: int | None = None
) -> Recap:
    """The story so far: every chapter finished by the bound (``only``: that chapter),
    summarised from what is kept or made now and kept (extractive); the current chapter
    with how far it goes. A model's summary, when one is kept, comes with each."""
    from core.store.library import page_texts

    store = CompanionStore(db)
    bound = bound_of(db, book_id) if read_to is None else read_to
    texts = dict(page_texts(db, book_id))
    made: list[ChapterRecap] = []
    for chapter in chapters(db, book_id, texts):
        if chapter.first > bound:
            break
        if only is not None and chapter.index != only:
            continue
        if chapter.last > bound:
            made.append(ChapterRecap(chapter, "current", read_to=bound))
            continue
        pages = chapter_text(texts, chapter)
        key = text_key(pages)
        kept = store.item(book_id, KIND, f"offline:{key}", RECAP_VERSION)
        if kept is None:
            kept = extractive(pages)
            store.put_item(book_id, KIND, f"offline:{key}", RECAP_VERSION, kept)
        model = store.item(book_id, KIND, f"model:{key}", RECAP_VERSION)
        made.append(
            ChapterRecap(
                chapter,
                "read",
                tuple((int(p), str(s)) for p, s in kept),
                str(model.get("text", "")) if isinstance(model, dict) else "",
            )
        )
    result = Recap(book_id, bound, tuple(made))
    if only is None:
        view = {"print": book_print(db, book_id), "recap": result.to_json()}
        store.put_item(book_id, KIND_VIEW, "current", RECAP_VERSION, view)
    return result


def stored(db: pw.SqliteDatabase, book_id: int, read_to: int | None = None) -> Recap | None:
    """The story so far kept for exactly this bound (what the tab shows at once), or None."""
    bound = bound_of(db, book_id) if read_to is None else read_to
    view = CompanionStore(db).item(book_id, KIND_VIEW, "current", RECAP_VERSION)
    if not view or view.get("print") != book_print(db, book_id):
        return None
    data = view["recap"]
    if data.get("read_to") != bound:
        return None
    return Recap(
        book_id,
        bound,
        tuple(
            ChapterRecap(
                Chapter(int(c["chapter"]), str(c["title"]), *map(int, c["pages"])),
                str(c["state"]),
                tuple((int(p), str(s)) for p, s in c["sentences"]),
                str(c["summary"]),
                int(c["read_to"]),
            )
            for c in data["chapters"]
            if int(c["pages"][0]) <= bound
        ),
    )


def forget_view(db: pw.SqliteDatabase, book_id: int) -> None:
    """A chapter's summary changed (a model wrote one): the kept view is made again."""
    CompanionStore(db).drop_items(book_id, KIND_VIEW)


def previously(result: Recap, chapters_back: int = 2) -> str:
    """A short "Previously…" for a reader back after some days: the last chapters finished,
    in a sentence or two each, and where the reader stopped."""
    done = [c for c in result.chapters if c.state == "read"][-chapters_back:]
    lines: list[str] = []
    for c in done:
        body = c.text or " ".join(s for _, s in c.sentences[:2])
        lines.append(f"{c.chapter.title}: {body}")
    current = next((c for c in result.chapters if c.state == "current"), None)
    if current is not None:
        lines.append(
            f"You stopped on page {result.read_to}, in {current.chapter.title} "
            f"(pages {current.chapter.first}–{current.chapter.last})."
        )
    return "\n\n".join(lines)


def returning(
    db: pw.SqliteDatabase, book_id: int, days: int, now: dt.datetime | None = None
) -> bool:
    """The book is being opened: whether the reader was away at least ``days`` days (0:
    never say so). Remembers this opening for next time."""
    now = now or dt.datetime.now(dt.UTC)
    store = CompanionStore(db)
    seen = store.item(book_id, "seen", "", 1)
    store.put_item(book_id, "seen", "", 1, {"at": now.isoformat()})
    if days <= 0 or not seen:
        return False
    try:
        last = dt.datetime.fromisoformat(str(seen["at"]))
    except (KeyError, ValueError):
        return False
    return now - last >= dt.timedelta(days=days)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line[:60]
