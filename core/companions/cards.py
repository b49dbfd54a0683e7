"""Flashcards that test something, all from pages 1..``read_to``: a cloze card per highlight
and per note (the rarest words blanked, ``cloze``), a who-said-it card per telling line of
dialogue, the chat's Define lookups, and with a model question-and-answer cards on chapters
read (``core.companions.model``). Each card holds its quote and page; a review keeps when each
card is next due (a short Leitner ladder).

Cards are made on demand from the library, so a deleted highlight takes its card with it; the
review state and the quiz cards are kept in ``companion_item`` ("card_review", "quiz").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import peewee as pw

from core.companions.cloze import cloze, who_said
from core.companions.store import CompanionStore
from core.companions.xray import bound_of

if TYPE_CHECKING:
    from core.store.library import Library

REVIEW_VERSION = 1
QUIZ_VERSION = 1
LADDER_DAYS = (0, 1, 3, 7, 14, 30, 90)  # box → days until the card is due again


@dataclass(frozen=True)
class Card:
    key: str  # "highlight:12", "note:3", "quiz:<chapter hash>:1"
    front: str
    back: str
    quote: str
    page: int
    source: str  # "highlight", "note", "define" or "quiz"

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "front": self.front,
            "back": self.back,
            "quote": self.quote,
            "page": self.page,
            "source": self.source,
        }


def cards(library: Library, book_id: int) -> list[Card]:
    """The book's cards within the bound, in page order: highlights and the reader's notes
    as cloze cards, who-said-it cards, Define lookups and quiz questions."""
    db = library.db
    title = library.get_book(book_id).title
    bound = bound_of(db, book_id)
    made: list[Card] = []
    for h in library.list_highlights(book_id):
        if h.page > bound:
            continue
        quote = " ".join(h.text.split())
        front, answers = cloze(quote)
        back = f"{title}, p. {h.page}" + (f"\n\n{h.note}" if h.note else "")
        if answers:
            back = f"{', '.join(answers)}\n\n“{quote}”\n\n" + back
        made.append(Card(f"highlight:{h.id}", front, back, quote, h.page, "highlight"))
    for note in library.list_notes(book_id, source="reader"):
        page = int(note.page or 0)
        if page > bound:
            continue
        quote = _page_quote(db, book_id, page) if page else ""
        text = note.text.strip()
        front, answers = cloze(text)
        back = title
        if page:
            back = f"{title}, p. {page}" + (f"\n\n“{quote}”" if quote else "")
        if answers:
            back = f"{', '.join(answers)}\n\n{text}\n\n" + back
        made.append(Card(f"note:{note.id}", front, back, quote, page, "note"))
    made += [c for c in define_cards(db, book_id, title) if c.page <= bound]
    made += said_cards(db, book_id, title, bound)
    for key, value in sorted(CompanionStore(db).items(book_id, "quiz", QUIZ_VERSION).items()):
        for i, q in enumerate(value.get("questions", [])):
            page = int(q.get("page", 0))
            if page > bound or not q.get("question"):
                continue  # asked from a chapter the reader has read; never past the bound
            quote = str(q.get("quote", ""))
            back = f"{q.get('answer', '')}\n\n“{quote}” — {title}, p. {page}"
            made.append(Card(f"quiz:{key}:{i}", str(q["question"]), back, quote, page, "quiz"))
    # what the reader kept comes first, then the dialogue quiz, each in page order
    made.sort(key=lambda c: (c.source == "said", c.page, c.source != "highlight", c.key))
    return [c for c in made if c.front]


def said_cards(db: pw.SqliteDatabase, book_id: int, title: str, bound: int) -> list[Card]:
    """Who-said-it cards from the dialogue of pages 1..``bound``, speakers as X-Ray names
    them (an alias finds its person: "said Lizzy" is Elizabeth Bennet)."""
    from core.companions import xray
    from core.store.library import page_texts

    made = xray.current(db, book_id)
    people = {n: e.name for e in made.entries if e.kind == "person" for n in e.names()}
    pages = [(n, t) for n, t in page_texts(db, book_id) if n <= bound]
    out = []
    for page, line, speaker, key in who_said(pages, people):
        back = f"{speaker}\n\n{title}, p. {page}"
        out.append(Card(f"said:{key}", f"Who said: “{line}”", back, line, page, "said"))
    return out


DEFINE = "Define · "  # how the chat shows a Define lookup (desktop/chat/render.quick_action_text)


def define_cards(db: pw.SqliteDatabase, book_id: int, title: str) -> list[Card]:
    """A card per Define lookup in the book's conversations: the word or phrase selected,
    the answer the chat gave, the page it was selected on."""
    from core.store.conversations import Conversations

    conversations = Conversations(db)
    made: list[Card] = []
    for conversation in conversations.list_for_book(book_id):
        records = conversations.history(conversation.id)
        for question, answer in pairwise(records):
            if question.role != "user" or not question.text.startswith(DEFINE):
                continue
            if answer.role != "assistant" or answer.status != "complete" or not answer.text:
                continue
            term = " ".join((question.selection_text or "").split())
            page = int(question.selection_page or 0)
            if not term:
                continue
            back = f"{answer.text.strip()}\n\n{title}, p. {page}"
            made.append(Card(f"define:{question.id}", term, back, term, page, "define"))
    return made


def _page_quote(db: pw.SqliteDatabase, book_id: int, page: int, chars: int = 200) -> str:
    from core.store.models import page_text

    row = db.execute_sql(
        "SELECT text FROM page_plain WHERE book_id = ? AND number = ?", (book_id, page)
    ).fetchone()
    if row is None:
        return ""
    text = " ".join(page_text(row[0]).split())
    return text[:chars].rsplit(" ", 1)[0] + "…" if len(text) > chars else text


# reviewing ---------------------------------------------------------------------------------


def due(library: Library, book_id: int, now: dt.datetime | None = None) -> list[Card]:
    """The cards due for review now (a card never reviewed is due)."""
    now = now or dt.datetime.now(dt.UTC)
    state = CompanionStore(library.db).item(book_id, "card_review", "", REVIEW_VERSION) or {}
    out = []
    for card in cards(library, book_id):
        seen = state.get(card.key)
        if seen is None or dt.datetime.fromisoformat(seen["due"]) <= now:
            out.append(card)
    return out


def review(
    db: pw.SqliteDatabase, book_id: int, key: str, knew: bool, now: dt.datetime | None = None
) -> dt.datetime:
    """The reader answered a card: up the ladder when they knew it, back to the start when
    not. Returns when it is due again."""
    now = now or dt.datetime.now(dt.UTC)
    store = CompanionStore(db)
    state = store.item(book_id, "card_review", "", REVIEW_VERSION) or {}
    box = int(state.get(key, {}).get("box", 0))
    box = min(box + 1, len(LADDER_DAYS) - 1) if knew else 0
    when = now + dt.timedelta(days=LADDER_DAYS[box], minutes=0 if knew else 1)
    state[key] = {"box": box, "due": when.isoformat()}
    store.put_item(book_id, "card_review", "", REVIEW_VERSION, state)
    return when
