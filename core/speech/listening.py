"""Listening is reading: a page read aloud to its end counts as read, by the same rule as
reading on (``core.reading``). This is the only place read aloud moves ``read_to``; the
reading session decides, so a far jump while listening (looking ahead) raises nothing."""

from __future__ import annotations

from core.reading import ReadingSession


def page_listened(session: ReadingSession, page: int) -> bool:
    """Page ``page`` was read aloud to its last sentence and reading goes on to the next:
    as if the reader turned the page there. True when ``read_to`` rose."""
    if page < session.page_count:
        return session.read_on(page + 1)
    return session.read_on(page)
