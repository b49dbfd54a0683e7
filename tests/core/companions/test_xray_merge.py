"""X-Ray keeps one entry per person by the evidence of the pages read (short forms, full
names, "the eldest", titles of address, assumed names), keeps places apart from people, and
applies the reader's own merges, splits, renames and hides (kept per book, exported)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.cli import main
from core.companions import xray
from core.paths import resolve_paths
from core.store.library import Library


def entries_at(library: Library, path: Path, page: int) -> tuple[int, dict[str, xray.Entry]]:
    book = import_book(library, path).book
    library.set_read_to(book.id, page)
    made = xray.build(library.db, book.id)
    return book.id, {e.name: e for e in made.entries}


def holder(entries: dict[str, xray.Entry], name: str) -> list[str]:
    """The entries that carry ``name`` (as their name or an alias)."""
    return [e.name for e in entries.values() if name in e.names()]


def test_pride_and_prejudice_at_page_54_one_entry_per_person(
    library: Library, books_dir: Path
) -> None:
    _, entries = entries_at(library, books_dir / "pride_and_prejudice.epub", 54)
    together = [
        ("Elizabeth", "Lizzy"),  # the table of short forms
        ("Elizabeth", "Eliza"),
        ("Jane", "Miss Bennet"),  # "her eldest daughter … Jane"
        ("Catherine", "Kitty"),
        ("Caroline", "Miss Bingley"),  # "Caroline Bingley" signs her letter
        ("Charlotte", "Miss Lucas"),  # "Charlotte Lucas", the one daughter named
        ("Sir William", "Sir William Lucas"),
        ("Darcy", "Mr. Darcy"),
        ("Charles", "Mr. Bingley"),  # “It is amazing …,” said Bingley — “My dear Charles, …”
        ("Louisa", "Mrs. Hurst"),  # Mrs. Hurst … added— “…” — “She did indeed, Louisa. …”
    ]
    for one, other in together:
        assert holder(entries, one) == holder(entries, other) and len(holder(entries, one)) == 1, (
            f"▶ {one} and {other}: {holder(entries, one)} / {holder(entries, other)}"
        )
    assert entries[holder(entries, "Kitty")[0]].kind == "person"
    assert entries["Lucas Lodge"].kind == "place" and holder(entries, "Lucas Lodge") == [
        "Lucas Lodge"
    ], "a house is no alias of Miss Lucas"
    assert entries["St. James"].kind == "place"
    assert "Mr. Bennet" not in entries[holder(entries, "Elizabeth")[0]].aliases


def test_a_name_said_in_a_reply_joins_its_speaker_only_once_the_reply_is_read(
    library: Library, books_dir: Path
) -> None:
    """Louisa is named on p. 32 (a letter); Mrs. Hurst is first answered "Louisa" on p. 37:
    until then nothing in the pages read ties them (no spoiler)."""
    path = books_dir / "pride_and_prejudice.epub"
    _, before = entries_at(library, path, 36)
    assert "Louisa" not in before["Mrs. Hurst"].names()
    _, after = entries_at(library, path, 37)
    assert holder(after, "Louisa") == ["Mrs. Hurst"]


def test_a_christmas_carol_at_page_55_scrooge_is_one_and_martha_her_own(
    library: Library, books_dir: Path
) -> None:
    """ "Uncle Scrooge" and "Master Scrooge" are no other Scrooge: Ebenezer Scrooge is Mr.
    Scrooge. "“Hide, Martha, hide!” cried the two young Cratchits", just after Mrs. Cratchit
    spoke, is said to a third one: Martha is no name of her mother."""
    _, entries = entries_at(library, books_dir / "a_christmas_carol.epub", 55)
    assert holder(entries, "Ebenezer Scrooge") == holder(entries, "Mr. Scrooge")
    assert len(holder(entries, "Mr. Scrooge")) == 1
    assert "Martha" not in entries["Mrs. Cratchit"].names(), "▶ Martha taken for her mother"


def test_one_first_name_with_several_surnames_is_not_one_person(
    library: Library, books_dir: Path
) -> None:
    """By p. 90 Sherlock Holmes has John Clay, John Turner and John Cobb: "clay" is also
    a word, yet a first name before it makes it a surname; none of them is merged."""
    _, entries = entries_at(library, books_dir / "the_adventures_of_sherlock_holmes.epub", 90)
    johns = ["John Clay", "John Turner", "John Cobb"]
    held = [e for j in johns for e in holder(entries, j)]
    assert "John Clay" in held and "Mr. Turner" in held
    assert len(held) == len(set(held)), f"▶ two Johns in one entry: {held}"


def test_sherlock_holmes_at_page_19_the_king_is_one_entry(
    library: Library, books_dir: Path
) -> None:
    _, entries = entries_at(library, books_dir / "the_adventures_of_sherlock_holmes.epub", 19)
    king = holder(entries, "Count Von Kramm")
    assert (
        king == holder(entries, "Majesty") == holder(entries, "Ormstein") == ["the King of Bohemia"]
    )
    assert "Bohemian" not in {n for e in entries.values() for n in e.names()}
    assert entries["Bohemia"].kind == "place" and entries["Briony Lodge"].kind == "place"
    assert entries["St. Monica"].kind == "place", "the Church of St. Monica"


def test_the_reader_merges_splits_renames_and_hides_kept_per_book(
    library: Library, books_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book_id, _ = entries_at(library, books_dir / "pride_and_prejudice.epub", 54)
    other_id, _ = entries_at(library, books_dir / "the_adventures_of_sherlock_holmes.epub", 19)
    for edit in (
        ["--merge", "Charles", "Mr. Bingley"],
        ["--merge", "Louisa", "Mrs. Hurst"],
        ["--rename", "Mr. Bingley", "Charles Bingley"],
        ["--split", "Elizabeth Bennet", "Eliza"],
        ["--hide", "Lucases"],
    ):
        assert main(["xray", str(book_id), *edit]) == 0
    library.close()  # kept across a restart
    again = Library.open(resolve_paths())
    try:
        capsys.readouterr()
        assert main(["xray", str(book_id), "--json", "--limit", "100"]) == 0
        entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)["entries"]}
        assert {"Charles", "Mr. Bingley"} <= set(entries["Charles Bingley"]["aliases"])
        assert "Louisa" in entries["Mrs. Hurst"]["aliases"]
        assert "Eliza" in entries and "Eliza" not in entries["Elizabeth Bennet"]["aliases"]
        assert "Lucases" not in entries
        assert main(["xray", str(book_id), "--unhide", "Lucases"]) == 0
        assert "Lucases" in {e.name for e in xray.current(again.db, book_id).entries}
        other = {e.name for e in xray.current(again.db, other_id).entries}
        assert "Holmes" in other, "edits are kept per book"
        capsys.readouterr()
        assert main(["export-conversation", "--book", str(book_id)]) == 0
        assert "### Charles Bingley (also" in capsys.readouterr().out, "exported with the notes"
    finally:
        again.close()
