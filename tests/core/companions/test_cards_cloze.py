"""Flashcards that test something, without a model: cloze cards from highlights and notes
(the rare words blanked), who-said-it cards from dialogue, all within read_to, and the Anki
package still holding them."""

from __future__ import annotations

import sqlite3
import zipfile
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.cli import main
from core.companions import cards
from core.companions.cloze import BLANK, cloze
from core.store.library import Library

TRUTH = (
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife."
)


def test_cloze_blanks_the_rare_words_not_the_common_ones() -> None:
    front, answers = cloze(TRUTH)
    assert answers and front.count(BLANK) == len(answers)
    assert {a.lower() for a in answers} <= {"acknowledged", "possession", "fortune"}
    for common in ("truth", "single", "good", "want", "wife"):
        assert common in front
    assert cloze("It is a cat.") == ("It is a cat.", ())


@pytest.fixture
def pride(library: Library, books_dir: Path) -> int:
    book = import_book(library, books_dir / "pride_and_prejudice.epub").book
    library.set_read_to(book.id, 54)
    library.add_highlight(book.id, 3, TRUTH, note="The first line")
    library.add_highlight(book.id, 200, "Mr. Darcy's letter explains everything.")  # past
    library.add_note(book.id, "Netherfield is let at last; possession before Michaelmas", page=3)
    return book.id


def test_cards_test_something_and_stay_within_read_to(library: Library, pride: int) -> None:
    made = cards.cards(library, pride)
    assert made and all(c.page <= 54 for c in made), "▶ a card from past read_to"
    highlight = next(c for c in made if c.source == "highlight")
    blanked = highlight.back.split("\n\n")[0].split(", ")
    assert BLANK in highlight.front and blanked and all(w in TRUTH for w in blanked)
    assert "The first line" in highlight.back
    note = next(c for c in made if c.source == "note")
    assert BLANK in note.front and "Netherfield" in note.front, "names stay"
    said = [c for c in made if c.source == "said"]
    assert 5 <= len(said) <= 20
    cough = next(c for c in said if "cough for my own amusement" in c.front)
    assert cough.front.startswith("Who said:") and cough.back.startswith("Catherine")
    library.set_read_to(pride, 425)
    assert any(c.page == 200 for c in cards.cards(library, pride)), "read on: it comes"


def test_anki_export_keeps_the_cloze_and_who_said_cards(
    library: Library, pride: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = cards.cards(library, pride)
    assert main(["cards", str(pride), "--anki", str(tmp_path / "pp.apkg")]) == 0
    assert f"{len(made)} cards" in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "pp.apkg") as z:
        z.extract("collection.anki2", tmp_path)
    fronts = [
        row[0].split("\x1f")[0]
        for row in sqlite3.connect(tmp_path / "collection.anki2").execute("SELECT flds FROM notes")
    ]
    assert any(BLANK in f for f in fronts) and any(f.startswith("Who said:") for f in fronts)
