"""Listening is reading: a page read aloud to its end raises read_to like reading on; after a
far jump (looking ahead) it does not."""

from __future__ import annotations

from core.reading import ReadingSession
from core.speech.listening import page_listened


def test_a_page_listened_to_its_end_counts_as_read() -> None:
    session = ReadingSession(1, 100, page=10, read_to=10)
    assert page_listened(session, 10) is True
    assert (session.page, session.read_to) == (11, 11)


def test_listening_after_a_far_jump_does_not_move_read_to() -> None:
    session = ReadingSession(1, 100, page=10, read_to=10)
    session.jump(60)
    assert page_listened(session, 60) is False
    assert (session.page, session.read_to) == (61, 10)


def test_the_last_page() -> None:
    session = ReadingSession(1, 5, page=5, read_to=5)
    assert page_listened(session, 5) is False and session.read_to == 5
