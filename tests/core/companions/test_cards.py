"""Flashcards from highlights and notes, reviewed on a ladder, and written as an Anki package
that opens as a collection with each card's quote and page."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from core.cli import main
from core.companions import anki, cards
from core.companions.store import CompanionStore
from core.errors import MarginError
from core.store.library import BookInfo, Library


def fill(library: Library, book: BookInfo) -> None:
    library.add_highlight(book.id, 5, "Down, down, down. Would the fall never come to an end!")
    library.add_highlight(
        book.id, 3, "“and what is the use of a book,” thought Alice", note="Pictures!"
    )
    library.add_note(book.id, "Why does the Rabbit have a watch?", page=4)
    library.add_note(book.id, "Agent memory: not a card", page=4, source="agent")
    library.set_read_to(book.id, 5)  # cards come only from pages read


def kept(made: list[cards.Card]) -> list[cards.Card]:
    """The cards of what the reader kept (highlights and notes), not dialogue's."""
    return [c for c in made if c.source != "said"]


def test_cards_from_highlights_and_notes(library: Library, alice: BookInfo) -> None:
    fill(library, alice)
    made = kept(cards.cards(library, alice.id))
    assert [(c.source, c.page) for c in made] == [("highlight", 3), ("note", 4), ("highlight", 5)]
    assert made[0].quote.startswith("“and what is the use") and "Pictures!" in made[0].back
    assert "Why does the" in made[1].front and made[1].quote  # its page's words
    # a quiz question from a chapter after the bound is never a card
    library.set_read_to(alice.id, 10)
    CompanionStore(library.db).put_item(
        alice.id,
        "quiz",
        "x",
        cards.QUIZ_VERSION,
        {
            "questions": [
                {"question": "Who fell?", "answer": "Alice", "quote": "Down, down", "page": 5},
                {"question": "Who is mad?", "answer": "The Hatter", "quote": "mad", "page": 50},
            ]
        },
    )
    quiz = [c for c in cards.cards(library, alice.id) if c.source == "quiz"]
    assert [c.front for c in quiz] == ["Who fell?"]


def test_review_ladder(library: Library, alice: BookInfo) -> None:
    fill(library, alice)
    now = dt.datetime(2026, 11, 25, tzinfo=dt.UTC)
    first = kept(cards.due(library, alice.id, now))
    assert len(first) == 3
    cards.review(library.db, alice.id, first[0].key, True, now)
    cards.review(library.db, alice.id, first[1].key, False, now)
    later = kept(cards.due(library, alice.id, now + dt.timedelta(minutes=5)))
    assert [c.key for c in later] == [first[1].key, first[2].key]  # known: due tomorrow
    assert len(kept(cards.due(library, alice.id, now + dt.timedelta(days=2)))) == 3


def test_anki_package_is_a_collection_with_quotes_and_pages(
    library: Library, alice: BookInfo, tmp_path: Path
) -> None:
    fill(library, alice)
    made = cards.cards(library, alice.id)
    target = tmp_path / "alice.apkg"
    assert anki.write_apkg(target, alice.title, alice.sha256, made) == 3
    with zipfile.ZipFile(target) as z:
        assert set(z.namelist()) == {"collection.anki2", "media"}
        assert json.loads(z.read("media")) == {}
        z.extract("collection.anki2", tmp_path)
    con = sqlite3.connect(tmp_path / "collection.anki2")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"col", "notes", "cards", "revlog", "graves"} <= tables
    (ver, models, decks) = con.execute("SELECT ver, models, decks FROM col").fetchone()
    assert ver == 11
    models, decks = json.loads(models), json.loads(decks)
    notes = con.execute(  # in the order the cards come (their "due" is their position)
        "SELECT n.id, n.mid, n.flds, n.sfld FROM notes n JOIN cards c ON c.nid = n.id "
        "ORDER BY c.due"
    ).fetchall()
    assert len(notes) == 3
    for (note_id, mid, flds, _sfld), card in zip(notes, made, strict=True):
        model = models[str(mid)]
        fields = dict(zip([f["name"] for f in model["flds"]], flds.split("\x1f"), strict=True))
        assert fields["Page"] == str(card.page)
        assert fields["Quote"] and fields["Quote"].startswith(card.quote[:10])
        assert fields["Front"] == card.front.replace("“", "“")
        did, nid = con.execute("SELECT did, nid FROM cards WHERE nid = ?", (note_id,)).fetchone()
        assert decks[str(did)]["name"] == alice.title and nid == note_id
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    # exported again: the same notes (Anki updates them instead of adding copies)
    again = tmp_path / "again.apkg"
    anki.write_apkg(again, alice.title, alice.sha256, made)
    with zipfile.ZipFile(again) as z:
        z.extract("collection.anki2", tmp_path / "b")
    ids = sqlite3.connect(tmp_path / "b" / "collection.anki2").execute("SELECT id FROM notes")
    assert sorted(r[0] for r in ids) == sorted(n[0] for n in notes)


def test_no_cards_and_bad_folder_say_so(library: Library, alice: BookInfo, tmp_path: Path) -> None:
    with pytest.raises(MarginError, match="has no cards yet"):
        anki.write_apkg(tmp_path / "x.apkg", alice.title, alice.sha256, [])
    fill(library, alice)
    with pytest.raises(MarginError, match="could not be written"):
        anki.write_apkg(
            tmp_path / "nowhere" / "x.apkg",
            alice.title,
            alice.sha256,
            cards.cards(library, alice.id),
        )


def test_cli_cards(
    library: Library, alice: BookInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cards", "alice"]) == 0
    assert "has no cards yet" in capsys.readouterr().out
    fill(library, alice)
    library.close()
    assert main(["cards", "alice", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len([c for c in listed if c["source"] != "said"]) == 3
    assert main(["cards", "alice", "--anki", str(tmp_path / "deck")]) == 0
    assert f"{len(listed)} cards" in capsys.readouterr().out and (tmp_path / "deck.apkg").exists()
