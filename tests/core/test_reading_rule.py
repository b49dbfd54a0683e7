"""The rule of how far the reader has read (core/reading.py), on sequences of moves over real
books, with a restart (the session saved, the library closed and opened again) in the middle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.reading import Contents, Place, ReadingSession, Screen
from core.store.library import Library


def two_pages(first: int) -> Screen:
    return Screen(first, first + 1)


def reopen(library: Library, session: ReadingSession) -> tuple[Library, ReadingSession]:
    """Save, close the library, open it again and the book in a new session (a restart)."""
    session.save(library)
    library.close()
    again = Library.open(resolve_paths())
    opened.append(again)
    return again, ReadingSession.open(again, again.get_book(session.book_id))


opened: list[Library] = []


@pytest.fixture
def pride(books_dir: Path) -> Iterator[tuple[Library, int]]:
    library = Library.open(resolve_paths())
    opened.append(library)
    yield library, import_book(library, books_dir / "pride_and_prejudice.epub").book.id
    while opened:
        opened.pop().close()


def turn(session: ReadingSession, screens: int, size: int = 2) -> None:
    """Page Down ``screens`` times on screens of ``size`` pages, each starting on the page
    after the one before."""
    for _ in range(screens):
        past = session.screen
        session.read_on(Screen(past.last + 1, past.last + size), past)


def test_the_first_chapter_is_found_from_the_contents(library: Library, books_dir: Path) -> None:
    firsts = {}
    for name in (
        "pride_and_prejudice",
        "the_adventures_of_sherlock_holmes",
        "alice_in_wonderland",
        "metamorphosis",
    ):
        book = import_book(library, books_dir / f"{name}.epub").book
        firsts[name] = ReadingSession.open(library, book).contents.first_chapter
    assert firsts == {
        "pride_and_prejudice": 3,  # Titlepage, Imprint, then "I"
        "the_adventures_of_sherlock_holmes": 3,  # Titlepage, Imprint, then "A Scandal in Bohemia"
        "alice_in_wonderland": 3,  # the title, an edition line, Contents, then CHAPTER I.
        "metamorphosis": 3,
    }
    named = Contents.of(
        [("Cover", 1), ("Dedication", 2), ("The Storm", 4), ("Chapter 9", 300)], page_count=400
    )
    assert named.first_chapter == 4, "no chapter near the start: the first entry past the front"
    assert Contents.of([]).first_chapter == 1


@pytest.mark.parametrize("restart", [False, True])
def test_contents_then_reading_on_is_reading(pride: tuple[Library, int], restart: bool) -> None:
    library, book_id = pride
    s = ReadingSession.open(library, library.get_book(book_id))
    s.shown(Screen(1, 1))
    s.jump(3, Place(1))  # Contents → Chapter I
    s.shown(two_pages(3))
    assert not s.looking_ahead and s.read_to == 1, "the jump itself reads nothing"
    if restart:
        library, s = reopen(library, s)
        s.shown(two_pages(3))
    turn(s, 4)
    assert s.page == 11 and s.read_to == 11
    assert s.save(library).read_to == 11


@pytest.mark.parametrize("restart", [False, True])
def test_a_search_hit_two_hundred_pages_on_is_looking_ahead(
    pride: tuple[Library, int], restart: bool
) -> None:
    library, book_id = pride
    library.set_position(book_id, 20)
    s = ReadingSession.open(library, library.get_book(book_id))
    s.shown(two_pages(20))
    s.jump(220, Place(20))
    s.shown(two_pages(220))
    turn(s, 1)
    if restart:
        library, s = reopen(library, s)
        s.shown(two_pages(221))
    turn(s, 3)
    assert s.looking_ahead and s.read_to == 20
    assert s.save(library).read_to == 20
    assert s.read_to_here() == s.page and s.save(library).read_to == s.page


@pytest.mark.parametrize("restart", [False, True])
def test_a_jump_two_screens_on_then_five_screens_read(
    pride: tuple[Library, int], restart: bool
) -> None:
    library, book_id = pride
    library.set_position(book_id, 30)
    s = ReadingSession.open(library, library.get_book(book_id))
    s.shown(two_pages(30))
    s.jump(34, Place(30))  # two screens of two pages on
    s.shown(two_pages(34))
    assert not s.looking_ahead
    if restart:
        library, s = reopen(library, s)
        s.shown(two_pages(34))
    turn(s, 5)
    assert s.read_to == 34 + 5 * 2 and s.save(library).read_to == 44


def test_a_later_part_from_the_front_matter_is_looking_ahead(pride: tuple[Library, int]) -> None:
    library, book_id = pride
    s = ReadingSession.open(library, library.get_book(book_id))
    s.shown(Screen(1, 1))
    chapter_five = next(i.page for i in library.toc(book_id) if i.title == "V")
    s.jump(chapter_five, Place(1))
    s.shown(two_pages(chapter_five))
    turn(s, 3)
    assert s.looking_ahead and s.read_to == 1


@pytest.mark.parametrize("restart", [False, True])
def test_back_after_looking_ahead_then_reading_on(
    pride: tuple[Library, int], restart: bool
) -> None:
    library, book_id = pride
    library.set_position(book_id, 40)
    s = ReadingSession.open(library, library.get_book(book_id))
    s.shown(two_pages(40))
    s.jump(300, Place(40, 80))
    s.shown(two_pages(300))
    turn(s, 2)
    assert s.back(Place(s.page)) == Place(40, 80)
    s.shown(two_pages(40))
    if restart:
        library, s = reopen(library, s)
        s.shown(two_pages(40))
    assert not s.looking_ahead
    turn(s, 2)
    assert s.read_to == 44 and s.save(library).read_to == 44


def test_turning_past_a_two_column_screen_reads_its_last_line() -> None:
    s = ReadingSession(1, 400, page=23, read_to=23)
    s.shown(Screen(23, 26))
    assert s.read_on(Screen(26, 29)) and s.read_to == 26
    assert s.read_on(Screen(30, 33)) and s.read_to == 30, "the new screen's top too"
    s.read_on(Screen(29, 32))  # Page Up is no reading
    assert s.read_to == 30
