"""X-Ray without a model: entries from the book itself, never past the reader's bound."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.companions import xray
from core.companions.store import CompanionStore
from core.store.library import BookInfo, Library


def pages_used(made: xray.XRay) -> set[int]:
    return {p for e in made.entries for p, _, _ in e.mentions} | {
        p for e in made.entries for p, _ in e.description
    }


def test_story_names_titles_and_familiar_names(library: Library, story: BookInfo) -> None:
    made = xray.build(library.db, story.id, story.page_count)
    by_name = {e.name: e for e in made.entries}
    assert {"Elizabeth", "Mr. Bingley", "Miss Bingley", "Mr. Wickham"} <= set(by_name)
    # "Lizzy" goes with "Elizabeth": the book has them in the same paragraphs
    assert "Lizzy" in by_name["Elizabeth"].aliases
    assert "Elizabeth Bennet" in by_name["Elizabeth"].aliases
    # a bare surname goes with the man's title; his sister is her own entry
    assert "Bingley" in by_name["Mr. Bingley"].aliases
    assert "Bingley" not in by_name["Miss Bingley"].aliases
    assert by_name["Mr. Bingley"].kind == "person"
    assert {"Netherfield", "Longbourn"} <= set(by_name)
    assert by_name["Netherfield"].kind == "place"
    # a description is a sentence of the book that tells about the entry
    _page, sentence = by_name["Mr. Bingley"].description[0]
    assert sentence.startswith("Mr. Bingley was a young man of good fortune")
    assert made.find("Lizzy") == by_name["Elizabeth"]
    assert made.find("Miss Bingley’s") == by_name["Miss Bingley"]
    assert made.find("Bingley") == by_name["Mr. Bingley"]
    assert made.find("Heathcliff") is None


def test_never_past_the_bound_even_after_lowering(library: Library, alice: BookInfo) -> None:
    early = xray.build(library.db, alice.id, 20)
    assert early.read_to == 20 and early.entries
    assert max(pages_used(early)) <= 20
    names = {e.name for e in early.entries}
    assert "Alice" in names and "Hatter" not in names  # the Hatter comes in on p. 43
    later = xray.build(library.db, alice.id, 60)
    assert "Hatter" in {e.name for e in later.entries}
    assert max(pages_used(later)) > 20
    # the reader lowers the bound: what was read after it is gone from every part
    library.set_read_to(alice.id, 20)
    assert xray.stored(library.db, alice.id) is None  # the one kept was for page 60
    again = xray.current(library.db, alice.id)
    assert again == early
    assert max(pages_used(again)) <= 20
    assert "Hatter" not in {e.name for e in again.entries}


def test_reading_on_scans_only_the_new_pages(library: Library, alice: BookInfo) -> None:
    seen: list[tuple[int, int]] = []
    xray.build(library.db, alice.id, 30, progress=lambda done, todo: seen.append((done, todo)))
    assert seen[-1] == (30, 30)
    store = CompanionStore(library.db)
    assert [p for p, _ in store.page_rows(alice.id, "xray", 1000)] == list(range(1, 31))
    seen.clear()
    xray.build(library.db, alice.id, 40, progress=lambda done, todo: seen.append((done, todo)))
    assert seen[-1] == (10, 10)  # pages 31..40 only
    # the X-Ray kept for the bound is read back as it was made
    library.set_read_to(alice.id, 40)
    kept = xray.stored(library.db, alice.id)
    assert kept is not None and kept == xray.build(library.db, alice.id, 40)


def test_a_book_read_again_is_scanned_again(library: Library, alice: BookInfo) -> None:
    xray.build(library.db, alice.id, 30)
    library.db.execute_sql(
        "UPDATE book SET parser_version = parser_version + 1 WHERE id = ?", (alice.id,)
    )
    library.set_read_to(alice.id, 30)
    assert xray.stored(library.db, alice.id) is None
    seen: list[tuple[int, int]] = []
    xray.build(library.db, alice.id, progress=lambda done, todo: seen.append((done, todo)))
    assert seen[-1] == (30, 30)


def test_gone_with_the_book(library: Library, alice: BookInfo) -> None:
    xray.build(library.db, alice.id, 30)
    library.delete_book(alice.id)
    for table in ("companion_page", "companion_item"):
        assert library.db.execute_sql(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_finished_book_is_whole(library: Library, alice: BookInfo) -> None:
    library.set_read_to(alice.id, 5)
    library.set_finished(alice.id, True)
    made = xray.current(library.db, alice.id)
    assert made.read_to == alice.page_count


def test_cli(library: Library, alice: BookInfo, capsys: pytest.CaptureFixture[str]) -> None:
    library.set_read_to(alice.id, 25)
    library.close()
    assert main(["xray", "alice", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["read_to"] == 25
    assert all(p <= 25 for e in data["entries"] for p, _, _ in e["mentions"])
    assert data["entries"][0]["name"] == "Alice"
    assert main(["xray", "alice", "--name", "Hatter"]) == 1
    err = capsys.readouterr().err
    assert 'no one called "Hatter" in the pages read (1–25)' in err
    assert main(["xray", "alice", "--name", "Rabbit"]) == 0
    out = capsys.readouterr().out
    assert "Rabbit" in out and "first on p. 3" in out and "Pages: 3" in out


DETECTIVE = """THE CASE

CHAPTER I

Mr. Sherlock Holmes was seated at the breakfast table. Holmes smiled at me and lit his pipe. Mr. Holmes was a tall, thin man with a sharp face. "You have been in Afghanistan," said Holmes.

John Clay was a clever thief, and John Clay had a long tunnel under the bank. John Cobb was the cabman who waited outside. John Cobb drove us to the bank at night.

Holmes waited in the dark cellar. We walked to Saxe-Coburg Square, and Holmes tapped the pavement of Saxe-Coburg Square with his stick. Then Holmes said nothing for an hour, while Sherlock Holmes listened.
"""


def test_one_first_name_two_people(library: Library, tmp_path: object) -> None:
    from pathlib import Path

    from core.books.importer import import_book

    path = Path(str(tmp_path)) / "the_case.txt"
    path.write_text(DETECTIVE, encoding="utf-8")
    book = import_book(library, path).book
    made = xray.build(library.db, book.id, book.page_count)
    by_name = {e.name: e for e in made.entries}
    # the only full name of a man goes with his surname and title
    assert {"Holmes", "Mr. Holmes", "Mr. Sherlock Holmes"} <= set(
        by_name["Sherlock Holmes"].aliases
    )
    # two Johns are two people
    assert {"John Clay", "John Cobb"} <= set(by_name)
    assert "John Cobb" not in by_name["John Clay"].aliases


def test_things_the_pages_read_come_back_to(library: Library, alice: BookInfo) -> None:
    made = xray.build(library.db, alice.id, 60)
    things = {e.name: e for e in made.entries if e.kind == "thing"}
    assert "hookah" in things and things["hookah"].first_page == 30
    assert not {"hastily", "anxiously"} & set(things)  # manners, not things
    early = xray.build(library.db, alice.id, 25)
    assert "hookah" not in {e.name for e in early.entries}  # first met on p. 30


def test_things_are_not_qualities_spans_of_time_or_words_that_describe() -> None:
    """Pride and Prejudice's "fortnight", "misfortune", "imprudence", "ladyship" and Alice's
    "shrill" were listed as things: they are no longer, and "governess", "hookah" still are."""
    from core.companions.entities import NICKNAMES, find_entities
    from core.companions.names import scan_page

    common = {"fortune", "fort", "twelve", "perverse", "pleasure", "easy", "kind"}.__contains__
    for word in (
        "imprudence",
        "forbearance",
        "approbation",
        "ladyship",
        "impropriety",
        "misfortune",
        "displeasure",
        "fortnight",
        "twelvemonth",
        "perverseness",
    ):
        assert xray.abstract(word, common), word
    for word in ("governess", "patroness", "hookah", "chaise", "knight", "mansion", "witness"):
        assert not xray.abstract(word, common), word
    page = (
        "She heard a shrill voice from the hookah. The hookah was lit at once. "
        "Then a shrill, loud cry came from behind the hookah, and the shrill little thing ran. "
        "He went to the opium den; the opium den was dark, and the opium den was full."
    )
    rare = frozenset({"shrill", "hookah", "opium"})
    scans = [(n, scan_page(page, frozenset(), NICKNAMES, rare=rare)) for n in (1, 2)]
    assert scans[0][1].things["shrill"] == [3, 3, 3]  # every time before a word it describes
    assert scans[0][1].before["shrill"] == ["voice", "loud", "little"]
    assert scans[0][1].things["hookah"] == [3, 3, 0]
    things = {f.name for f in find_entities(scans) if f.kind == "thing"}
    assert things == {"hookah", "opium"}  # always before one noun: half of a name
    # a scan kept by an older version (two counts a word) still reads
    old = scan_page(page, frozenset(), NICKNAMES, rare=rare)
    old.things = {w: c[:2] for w, c in old.things.items()}
    old.before = {}
    assert {f.name for f in find_entities([(1, old), (2, old)]) if f.kind == "thing"} == {
        "hookah",
        "shrill",
        "opium",
    }
