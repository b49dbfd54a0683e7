"""The reading session's rules, without Qt: what moves the page, what moves the bound."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.books.importer import import_book
from core.reading import SLACK, Pace, Place, ReadingSession, Screen
from core.store.library import Library


def session(page: int = 30, read_to: int = 30, count: int = 400) -> ReadingSession:
    return ReadingSession(7, count, page=page, read_to=read_to)


def test_the_session_needs_no_qt() -> None:
    code = (
        "import sys, core.reading; "
        "print([m for m in sys.modules if m.startswith(('PySide6', 'desktop', 'qasync'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_reading_on_from_the_bound_raises_it() -> None:
    s = session()
    assert s.read_on(31) and s.read_to == 31
    assert s.read_on(32) and s.read_to == 32
    assert not s.looking_ahead


def test_a_page_turn_after_a_jump_past_the_bound_is_not_reading() -> None:
    s = session()
    s.jump(300, Place(30, 120))
    assert s.looking_ahead
    assert not s.read_on(301)
    assert s.page == 301 and s.read_to == 30, "▶ after a jump to p. 300 leaves read_to 30"
    for page in range(302, 310):
        s.read_on(page)
    assert s.read_to == 30 and s.looking_ahead
    assert s.bound_note() == "Looking ahead — the assistant still stops at p. 30"


def test_reading_on_from_one_screen_past_the_bound_still_counts() -> None:
    s = session()
    s.jump(30 + SLACK)
    assert not s.looking_ahead and s.bound_note() == ""
    assert s.read_on(32) and s.read_to == 32


def test_read_to_here_moves_the_bound_on_purpose_and_reading_goes_on_from_there() -> None:
    s = session()
    s.jump(300, Place(30))
    s.read_on(301)
    assert s.read_to_here() == 301 and not s.looking_ahead
    assert s.read_on(302) and s.read_to == 302


def test_back_returns_to_where_reading_stopped_and_reading_on_there_counts() -> None:
    s = session()
    s.jump(300, Place(30, 512))
    s.read_on(301)
    s.read_on(302)
    target = s.back(Place(302, 40))
    assert target == Place(30, 512) and s.page == 30
    assert s.history.can_forward()
    assert s.read_on(31) and s.read_to == 31
    assert s.forward(Place(31)) == Place(302, 40) and s.read_to == 31


def test_jumps_and_moves_backwards_never_move_the_bound() -> None:
    s = session(page=50, read_to=50)
    s.jump(10, Place(50))
    s.moved(9)
    assert not s.read_on(8)
    s.jump(400, Place(8))
    assert s.read_to == 50
    s.read_on(11)  # reading inside what was read: the bound stays
    assert s.read_to == 50


def test_reading_skips_of_more_than_a_screen_from_the_bound_count_only_from_the_bound() -> None:
    s = session()
    s.moved(31, Screen(31, 32))
    assert s.read_on(33) and s.read_to == 33, "a scroll over a short page: still reading"
    s.moved(34, Screen(34, 35))
    assert not s.read_on(90) and s.read_to == 33, "a leap with the scroll bar is no reading"
    assert s.looking_ahead


def test_a_finished_book_is_never_looking_ahead() -> None:
    s = ReadingSession(1, 400, page=1, read_to=1, finished=True)
    s.jump(300)
    assert not s.looking_ahead and s.bound_note() == ""


def test_pages_are_clamped_to_the_book() -> None:
    s = session(count=40)
    s.jump(900)
    assert s.page == 40
    s.jump(-3)
    assert s.page == 1
    assert s.set_bound(99) == 40


def test_history_keeps_a_hundred_places_and_a_new_jump_clears_forward() -> None:
    s = session()
    for page in range(1, 150):
        s.jump(page + 1, Place(page))
    steps = 0
    while s.back(Place(s.page)) is not None:
        steps += 1
    assert steps == 100
    s.jump(5, Place(s.page))
    assert not s.history.can_forward()


def test_pace_is_the_median_of_reading_turns_only() -> None:
    clock = [100.0]
    s = ReadingSession(1, 400, page=30, read_to=30, pace=Pace(clock=lambda: clock[0]))
    for page in (31, 32, 33):
        clock[0] += 40
        s.read_on(page)
    assert s.pace.seconds_per_page() == 40
    s.jump(200, Place(33))
    for page in (201, 202):
        clock[0] += 1000  # looking ahead: not reading, not measured
        s.read_on(page)
    assert s.pace.seconds_per_page() == 40
    assert Pace(3.0).seconds_per_page() == Pace.DEFAULT, "a remembered skim is not a pace"


def test_save_writes_the_page_and_only_raises_the_bound_by_reading(
    library: Library, books_dir: Path
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 30)
    s = ReadingSession.of(library.get_book(book.id))
    s.jump(60, Place(30))
    s.read_on(61)
    saved = s.save(library)
    assert (saved.page, saved.read_to) == (61, 30)
    s.back(Place(61))
    s.read_on(31)
    library.set_read_to(book.id, 20)  # `margin read-to 20` from another process meanwhile
    saved = s.save(library)
    assert (saved.page, saved.read_to) == (31, 31), "reading on raised it again"
    s.set_bound(12)
    assert s.save(library).read_to == 12, "set on purpose: lower as well"
